package proctest

import (
	"fmt"
	"io"
	"strings"
)

// WriteText writes the report as baton test prints it: a line per case,
// the untested routes of each process, what exploring found, and a
// summary.
func (r *Report) WriteText(w io.Writer) {
	for _, fe := range r.Invalid {
		fmt.Fprintf(w, "INVALID %s\n", fe.Error())
	}
	for _, f := range r.Files {
		for _, c := range f.Cases {
			if c.OK {
				fmt.Fprintf(w, "ok   %s: %s\n", c.File, c.Case)
				continue
			}
			x := c.Failure
			where := x.Action
			if x.Step != "" && !strings.HasSuffix(x.Action, " "+x.Step) && !strings.Contains(x.Action, " "+x.Step+" ") {
				where = "step " + x.Step + ", " + x.Action
			}
			fmt.Fprintf(w, "FAIL %s:%s: %s: %s: expected %s, got %s\n", c.File, x.Pos, c.Case, where, x.Expected, x.Got)
		}
		if f.Untested != nil {
			taken := f.Routes - len(f.Untested)
			fmt.Fprintf(w, "coverage %s: %d of %d routes taken\n", f.Path, taken, f.Routes)
			for _, rt := range f.Untested {
				fmt.Fprintf(w, "  untested: %s\n", rt)
			}
		}
		if e := f.Explore; e != nil {
			fmt.Fprintf(w, "explore %s: %d walks, seed %d\n", f.Path, e.Walks, e.Seed)
			for _, rt := range e.Unreached {
				fmt.Fprintf(w, "  never reached: %s\n", rt)
			}
			for _, x := range e.Endless {
				fmt.Fprintf(w, "  cannot end (walk %d): %s\n", x.Walk, x.What)
				writeTrail(w, x.Trail)
			}
			for _, x := range e.Unavoidable {
				fmt.Fprintf(w, "  unavoidable refusal (walk %d): %s\n", x.Walk, x.What)
				writeTrail(w, x.Trail)
			}
			if len(e.Unreached)+len(e.Endless)+len(e.Unavoidable) == 0 {
				fmt.Fprintf(w, "  every finish reached, every run ended, no refusal unavoidable\n")
			}
		}
	}
	fmt.Fprintf(w, "%d passed, %d failed", r.Passed, r.Failed)
	if len(r.Invalid) > 0 {
		fmt.Fprintf(w, ", %d invalid", len(r.Invalid))
	}
	fmt.Fprintln(w)
}

// writeTrail prints the last actions of a walk.
func writeTrail(w io.Writer, trail []string) {
	const keep = 8
	if len(trail) > keep {
		fmt.Fprintf(w, "    … %d actions before\n", len(trail)-keep)
		trail = trail[len(trail)-keep:]
	}
	for _, t := range trail {
		fmt.Fprintf(w, "    %s\n", t)
	}
}
