package runs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/baton-run/baton/interpreter"
)

// WriteList writes runs as a table, one run a line: id, process and
// version, state, outcome, started, updated and inputs.
func WriteList(w io.Writer, items []interpreter.RunListItem) error {
	t := newTable(w)
	fmt.Fprintln(t, "RUN\tPROCESS\tSTATE\tOUTCOME\tSTARTED\tUPDATED\tINPUTS")
	for _, it := range items {
		fmt.Fprintf(t, "%s\t%s v%d\t%s\t%s\t%s\t%s\t%s\n",
			it.ID, it.Process, it.Version, it.State, orDash(it.Outcome), it.StartedAt, it.UpdatedAt, inputs(it.Inputs))
	}
	return t.flush()
}

// table lays out tab-separated cells in columns, with no trailing spaces.
type table struct {
	w   io.Writer
	buf bytes.Buffer
	tw  *tabwriter.Writer
}

func newTable(w io.Writer) *table {
	t := &table{w: w}
	t.tw = tabwriter.NewWriter(&t.buf, 0, 4, 2, ' ', 0)
	return t
}

func (t *table) Write(p []byte) (int, error) { return t.tw.Write(p) }

func (t *table) flush() error {
	if err := t.tw.Flush(); err != nil {
		return err
	}
	for _, l := range strings.SplitAfter(t.buf.String(), "\n") {
		if l == "" {
			continue
		}
		nl := strings.HasSuffix(l, "\n")
		l = strings.TrimRight(l, " \n")
		if nl {
			l += "\n"
		}
		if _, err := io.WriteString(t.w, l); err != nil {
			return err
		}
	}
	return nil
}

// WriteView writes a run view (get_run's or cancel's data) for a person
// to read: the run, its inputs, the step table, the open work items and
// the history of completions, oldest first.
func WriteView(w io.Writer, raw json.RawMessage) error {
	var v interpreter.View
	if err := interpreter.DecodeExact(raw, &v); err != nil {
		return fmt.Errorf("read the run view: %w", err)
	}
	r := v.Run
	fmt.Fprintf(w, "Run %s: %s v%d (%s)\n", r.ID, r.Process, r.Version, r.Mode)
	fmt.Fprintf(w, "State:    %s", r.State)
	if r.Outcome != nil {
		fmt.Fprintf(w, ", outcome %s", *r.Outcome)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Started:  %s by %s\n", r.StartedAt, r.StartedBy)
	fmt.Fprintf(w, "Updated:  %s\n", r.UpdatedAt)
	if e := r.Ended; e != nil {
		fmt.Fprintf(w, "Ended:    %s by %s", e.At, e.By)
		if e.Note != nil {
			fmt.Fprintf(w, ": %s", oneLine(*e.Note))
		}
		fmt.Fprintln(w)
	}
	if v.Data != nil && len(v.Data.Inputs) > 0 {
		fmt.Fprintf(w, "Inputs:   %s\n", inputs(v.Data.Inputs))
	}

	fmt.Fprintln(w, "\nSteps:")
	tw := newTable(w)
	fmt.Fprintln(tw, "  STEP\tKIND\tSTATE\tDUE")
	for _, s := range v.Steps {
		due := s.Due
		if s.Overdue != nil && *s.Overdue {
			due += " (overdue)"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", s.ID, s.Kind, orDash(s.State), due)
	}
	if err := tw.flush(); err != nil {
		return err
	}

	if len(v.WorkItems) > 0 {
		fmt.Fprintln(w, "\nWork items:")
		for _, it := range v.WorkItems {
			fmt.Fprintf(w, "  %s  %s  %s  for %s", it.ID, it.StepID, it.Kind, assignee(it.AssignedTo))
			if it.Due != nil {
				fmt.Fprintf(w, "  due %s", *it.Due)
			}
			fmt.Fprintf(w, "\n      decisions: %s\n", strings.Join(it.Decide.Decisions, ", "))
			if e := it.Escalation; e != nil {
				fmt.Fprintf(w, "      escalated by %s at %s: %s\n", e.By, e.At, oneLine(e.Note))
			}
		}
	}

	if h := history(&v); len(h) > 0 {
		fmt.Fprintln(w, "\nHistory:")
		tw := newTable(w)
		for _, e := range h {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", e.rec.At, e.step, e.rec.By, what(e.rec))
			if e.rec.Summary != "" {
				fmt.Fprintf(tw, "  \t\t\t  %s\n", clip(oneLine(e.rec.Summary), 100))
			}
		}
		if err := tw.flush(); err != nil {
			return err
		}
	}
	return nil
}

type completion struct {
	step string
	rec  *interpreter.Record
}

// history returns every completion in run data, earlier ones kept in a
// step's history included, ordered by time (then by step order).
func history(v *interpreter.View) []completion {
	if v.Data == nil {
		return nil
	}
	var out []completion
	for _, s := range v.Steps {
		d := v.Data.Steps[s.ID]
		if d == nil {
			continue
		}
		for _, r := range d.History {
			out = append(out, completion{s.ID, r})
		}
		if d.Record != nil && d.Record.At != "" {
			out = append(out, completion{s.ID, d.Record})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].rec.At < out[j].rec.At })
	return out
}

// what says what a completion was: a decision with its note, or a
// completion with its chosen next and reason.
func what(r *interpreter.Record) string {
	s := r.Decision
	if s == "" {
		s = "completed"
	}
	if r.Next != "" {
		s += ", next " + r.Next
	}
	if r.Reason != "" {
		s += ": " + clip(oneLine(r.Reason), 80)
	}
	if r.Note != nil && *r.Note != "" {
		s += ": " + clip(oneLine(*r.Note), 80)
	}
	return s
}

func assignee(a interpreter.Assignee) string {
	if a.Person != "" {
		return "person " + a.Person
	}
	return "group " + a.Group
}

// inputs writes run inputs as KEY=VALUE, sorted by key: a string as it is
// unless it needs quoting, anything else as JSON.
func inputs(in map[string]any) string {
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + value(in[k])
	}
	return strings.Join(parts, " ")
}

func value(v any) string {
	if s, ok := v.(string); ok && s != "" && !strings.ContainsAny(s, " \t\n\"=") {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func orDash(s *string) string {
	if s == nil || *s == "" {
		return "-"
	}
	return *s
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
