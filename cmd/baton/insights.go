package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/baton-run/baton/internal/insights"
	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/interpreter"
	"github.com/baton-run/baton/workflows"
)

const insightsUsage = `usage: baton insights [flags]

Prints where a process's runs wait, how long each step takes, who does the
work, how often it goes back, and how check verdicts compare with people's
decisions, over the last --since; docs/insights.md says what each figure
means. Without --process, every published process of the organization.

The figures are read from the PostgreSQL of --database-url or, without it,
the one of the baton dev whose data folder is --data (default .baton).

Flags (flags win over environment variables, which win over defaults):
`

// runInsights is "baton insights".
func runInsights(args []string, stdout, stderr io.Writer) int {
	var where whereFlags
	var process, since, inboxURL string
	var asJSON bool
	fl := flag.NewFlagSet("insights", flag.ContinueOnError)
	where.register(fl)
	stringFlag(fl, &process, "process", "", "one process (default: every published process)")
	stringFlag(fl, &since, "since", "30d", "the window, back from now: a number of days (30d), weeks (2w), or a Go duration (12h)")
	stringFlag(fl, &inboxURL, "inbox-url", "", "the inbox's address (https://baton.example.com/inbox/), for links to the oldest open items (default: paths)")
	boolFlag(fl, &asJSON, "json", false, "print the figures as JSON")
	if code, ok := parseFlags(fl, args, insightsUsage, stderr); !ok {
		return code
	}
	window, err := insights.ParseWindow(since)
	if err != nil || fl.NArg() > 0 {
		fmt.Fprintf(stderr, "baton insights: --since %q: %v; give no arguments\n", since, err)
		return 2
	}
	ctx := context.Background()
	st, release, err := where.open(ctx, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "baton insights: %v\n", err)
		return 1
	}
	defer release()
	reports, err := insightsReports(ctx, st, where.org, process, window)
	if err != nil {
		fmt.Fprintf(stderr, "baton insights: %v\n", err)
		return 1
	}
	if inboxURL == "" {
		inboxURL = "/inbox/"
	}
	for _, r := range reports {
		r.Link(func(runID, itemID string) string { return workflows.InboxLink(inboxURL, runID, itemID) })
	}
	if asJSON {
		var v any = reports
		if process != "" {
			v = reports[0]
		}
		if err := writeJSON(stdout, v); err != nil {
			fmt.Fprintf(stderr, "baton insights: %v\n", err)
			return 1
		}
		return 0
	}
	for i, r := range reports {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		printInsights(stdout, r)
	}
	return 0
}

// insightsReports computes the figures of one process, or of every
// published one, each fitted to its latest version.
func insightsReports(ctx context.Context, st *store.Store, org, process string, window time.Duration) ([]*insights.Report, error) {
	names := []string{process}
	if process == "" {
		list, err := st.InsightsProcesses(ctx, org, window)
		if err != nil {
			return nil, err
		}
		names = names[:0]
		for _, p := range list {
			names = append(names, p.Process)
		}
	}
	reports := []*insights.Report{}
	for _, name := range names {
		pv, err := st.GetVersion(ctx, org, name, 0)
		if errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("organization %s has no published process %q; baton processes lists them", org, name)
		}
		if err != nil {
			return nil, err
		}
		var p interpreter.Process
		if err := json.Unmarshal(pv.Definition, &p); err != nil {
			return nil, fmt.Errorf("process %s v%d: %w", name, pv.Version, err)
		}
		r, err := st.Insights(ctx, org, name, &store.InsightsOptions{Since: window})
		if err != nil {
			return nil, err
		}
		r.Describe(&p)
		reports = append(reports, r)
	}
	return reports, nil
}

// printInsights writes one process's figures as text tables.
func printInsights(w io.Writer, r *insights.Report) {
	fmt.Fprintf(w, "Process %s, %s to %s (UTC)\n", r.Process, r.Since.UTC().Format("2006-01-02 15:04"), r.Until.UTC().Format("2006-01-02 15:04"))
	if r.RecordedSince != nil {
		fmt.Fprintf(w, "Step attempts are recorded since %s; earlier ones do not count.\n", r.RecordedSince.UTC().Format("2006-01-02 15:04"))
	}
	ru := r.Runs
	var outcomes []string
	for _, o := range ru.Outcomes {
		outcomes = append(outcomes, fmt.Sprintf("%s %d", o.Outcome, o.Count))
	}
	fmt.Fprintf(w, "\nRuns: %d started, %d ended", ru.Started, ru.Ended)
	if len(outcomes) > 0 {
		fmt.Fprintf(w, " (%s)", strings.Join(outcomes, ", "))
	}
	fmt.Fprintf(w, ", %d open now; duration %s\n", ru.Open, ru.Duration.Text())

	t := newTable(w, "step", "kind", "attempts", "ready→claimed", "claimed→done", "ready→decided", "by agents", "by people", "taken over", "rework", "returned", "refused/attempt", "leases expired", "overdue")
	for _, s := range r.Steps {
		t.row(s.Step, s.Kind, strconv.Itoa(s.Attempts), s.ReadyToClaimed.Text(), s.ClaimedToDone.Text(), s.ReadyToDecided.Text(),
			insights.Share(s.AgentShare, s.Done), insights.Share(s.PersonShare, s.Done), insights.Share(s.TakenOverShare, s.Done), insights.Share(s.ReworkRate, s.Ended),
			insights.Share(s.ReturnRate, s.Attempts), fmt.Sprintf("%.2f", s.NotAcceptedPerAttempt), strconv.Itoa(s.LeaseExpiries), strconv.Itoa(s.Overdue))
	}
	t.flush("\nSteps (attempts begun in the window; durations median / p90):")

	t = newTable(w, "step", "ready", "claimed", "waiting", "overdue", "oldest")
	for _, s := range r.Steps {
		if o := s.Open; o.Total() > 0 {
			t.row(s.Step, strconv.Itoa(o.Ready), strconv.Itoa(o.Claimed), strconv.Itoa(o.Waiting), strconv.Itoa(o.Overdue), ageText(o.OldestAge))
		}
	}
	t.flush("\nOpen now:")

	t = newTable(w, "step", "outcome", "next", "count")
	for _, rt := range r.Routes {
		next := rt.Next
		if next == "" {
			next = "(end)"
		}
		t.row(rt.Step, rt.Outcome, next, strconv.Itoa(rt.Count))
	}
	t.flush("\nRoutes taken:")

	t = newTable(w, "step", "question", "pass", "fail", "unsure", "people completed", "returned", "failed", "undecided")
	for _, q := range r.Questions {
		ask := q.Ask
		if ask == "" {
			ask = fmt.Sprintf("question %d", q.Index+1)
		}
		t.row(q.Step, ask, strconv.Itoa(q.Pass), strconv.Itoa(q.Fail), strconv.Itoa(q.Unsure),
			strconv.Itoa(q.Completed), strconv.Itoa(q.Returned), strconv.Itoa(q.Failed), strconv.Itoa(q.Undecided))
	}
	t.flush("\nChecked questions:")

	t = newTable(w, "run", "step", "state", "ready since", "overdue", "link")
	for _, it := range r.Oldest {
		t.row(it.RunID, it.Step, it.State, it.ReadyAt.UTC().Format("2006-01-02 15:04"), yesNo(it.Overdue), it.Link)
	}
	t.flush("\nOldest open:")

	t = newTable(w, "day", "started", "ended")
	for _, d := range r.Days {
		t.row(d.Day, strconv.Itoa(d.Started), strconv.Itoa(d.Ended))
	}
	t.flush("\nLast seven days:")
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func ageText(s *float64) string {
	if s == nil {
		return "—"
	}
	return insights.Seconds(*s)
}

// table is a text table that is printed, under its title, only when it
// has rows.
type table struct {
	w    io.Writer
	head []string
	rows [][]string
}

func newTable(w io.Writer, head ...string) *table { return &table{w: w, head: head} }

func (t *table) row(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) flush(title string) {
	if len(t.rows) == 0 {
		return
	}
	fmt.Fprintln(t.w, title)
	tw := tabwriter.NewWriter(t.w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  "+strings.Join(t.head, "\t"))
	for _, r := range t.rows {
		fmt.Fprintln(tw, "  "+strings.Join(r, "\t"))
	}
	_ = tw.Flush()
}
