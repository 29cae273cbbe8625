package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/baton-run/baton/internal/notify"
)

// loadChannels reads each channels file of --notify [ORG=]FILE as the
// channels of its organization (def when the value names none). An
// organization given twice is refused: one file is one organization's
// channels. A file with issues is refused with every one, at its line and
// column.
func loadChannels(def string, values []string, stdout io.Writer) (map[string]*notify.File, error) {
	files := map[string]*notify.File{}
	seen := map[string]string{}
	for _, v := range values {
		org, path := orgPath(v, def)
		if prev, ok := seen[org]; ok {
			return nil, fmt.Errorf("--notify names organization %s twice (%s and %s): give each organization one file", org, prev, path)
		}
		seen[org] = path
		f, err := notify.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("--notify %s: %w", v, err)
		}
		files[org] = f
		ids := make([]string, len(f.Channels))
		for i, c := range f.Channels {
			ids[i] = c.ID
		}
		fmt.Fprintf(stdout, "Notification channels of %s from %s: %s\n", org, path, strings.Join(ids, ", "))
	}
	return files, nil
}

const notifyUsage = `usage: baton notify log [flags]
       baton notify check FILE

  log    an organization's latest deliveries of run events to its channels,
         newest first, with each failure (--failing: only those not
         delivered), from --database-url or the PostgreSQL of baton dev's
         --data
  check  validate a channels file (the file of --notify) and list its
         channels, or every issue with its line and column

Flags (flags win over environment variables, which win over defaults):
`

// runNotify is "baton notify".
func runNotify(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || (args[0] != "log" && args[0] != "check") {
		fmt.Fprint(stderr, notifyUsage)
		return 2
	}
	sub, args := args[0], args[1:]
	fl := flag.NewFlagSet("notify "+sub, flag.ContinueOnError)
	var where whereFlags
	var limit int
	var failing, asJSON bool
	if sub == "log" {
		where.register(fl)
		intFlag(fl, &limit, "limit", 50, "at most this many deliveries")
		boolFlag(fl, &failing, "failing", false, "only deliveries not delivered (retrying or failed)")
		fl.BoolVar(&asJSON, "json", false, "print the deliveries as JSON, one a line")
	}
	if code, ok := parseFlags(fl, args, notifyUsage, stderr); !ok {
		return code
	}
	if sub == "check" {
		if fl.NArg() != 1 {
			fmt.Fprintln(stderr, "baton notify check: give one channels file")
			return 2
		}
		f, err := notify.ReadFile(fl.Arg(0))
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		for _, c := range f.Channels {
			fmt.Fprintf(stdout, "%s\t%s\t%s\n", c.ID, channelKind(c), channelEvents(c))
		}
		return 0
	}
	if fl.NArg() != 0 {
		fmt.Fprintf(stderr, "baton notify log: unexpected arguments %q\n", fl.Args())
		return 2
	}
	ctx := context.Background()
	st, release, err := where.open(ctx, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "baton notify log: %v\n", err)
		return 1
	}
	defer release()
	ds, err := st.RecentDeliveries(ctx, where.org, limit, failing)
	if err != nil {
		fmt.Fprintf(stderr, "baton notify log: %v\n", err)
		return 1
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		for _, d := range ds {
			_ = enc.Encode(d)
		}
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WHEN\tSTATE\tTRIES\tCHANNEL\tEVENT\tRUN\tITEM\tERROR")
	for _, d := range ds {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s %s\t%s\t%s\t%s\n", d.UpdatedAt.UTC().Format(time.DateTime), d.State, d.Attempts, d.Channel,
			d.EventType, d.EventID, d.RunID, d.WorkItemID, d.LastError)
	}
	_ = tw.Flush()
	return 0
}

func channelKind(c notify.Channel) string {
	if c.Format != "" {
		return c.Kind + " (" + c.Format + ")"
	}
	return c.Kind
}

func channelEvents(c notify.Channel) string {
	var out []string
	for _, t := range notify.AllTypes() {
		if c.Takes(t) {
			out = append(out, string(t))
		}
	}
	return strings.Join(out, ",")
}
