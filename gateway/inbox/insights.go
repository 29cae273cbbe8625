package inbox

import (
	"context"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/internal/insights"
	"github.com/baton-run/baton/interpreter"
	"github.com/baton-run/baton/workflows"
)

// InsightsReader reads process insights for an identity, refusing those
// that may not read them. When the inbox's Tools implement it
// (*gateway.Gateway does), operators get the insights pages.
type InsightsReader interface {
	Insights(ctx context.Context, id auth.Identity, process string, since time.Duration) (*insights.Report, *interpreter.Process, error)
	InsightsProcesses(ctx context.Context, id auth.Identity, since time.Duration) ([]insights.ProcessSummary, error)
}

// insightsWindows are the windows the pages offer.
var insightsWindows = []string{"7d", "30d", "90d"}

type windowLink struct {
	Label, URL string
	Current    bool
}

type insightsListPage struct {
	frame
	Windows []windowLink
	Rows    []insightsListRow
}

type insightsListRow struct {
	Process, URL           string
	Open, Overdue, Started int
}

type insightsPage struct {
	frame
	Process       string
	Windows       []windowLink
	Since, Until  string
	RecordedSince string
	Map           template.HTML
	Week          template.HTML
	Runs          insights.Runs
	RunDuration   string
	Outcomes      []bar
	Steps         []insightsStep
	Open          []insightsStep
	Questions     []insights.Question
	Oldest        []oldestRow
	Routes        []insights.Route
}

// insightsStep is a step's figures as the page shows them.
type insightsStep struct {
	insights.Step
	Waits                                                []durationBar
	AgentShare, PersonShare, TakenOver, Rework, Returned string
	Refused                                              string
	OldestAge                                            string
}

// durationBar is a median and a 90th percentile drawn as bars, as
// percentages of the longest p90 on the page.
type durationBar struct {
	Name, Text  string
	Median, P90 int
}

type bar struct {
	Label string
	Count int
	Pct   int
}

type oldestRow struct {
	insights.OpenItem
	URL, Ready, Age string
}

// insightsReader is the tools' InsightsReader, and whether the session
// may use it: operators only, others get 403.
func (in *Inbox) insightsReader(w http.ResponseWriter, r *http.Request, s *session) (InsightsReader, bool) {
	ir, ok := in.tools.(InsightsReader)
	if !ok {
		in.fail(w, r, s, http.StatusNotFound, "This inbox has no insights.")
		return nil, false
	}
	if !s.operator() {
		in.fail(w, r, s, http.StatusForbidden, "Insights are for the organization's operators. Ask an operator to show you where your process stands.")
		return nil, false
	}
	return ir, true
}

// window reads ?since=, 30 days by default, and the links to the others.
func window(r *http.Request, base string) (string, time.Duration, []windowLink) {
	label := r.URL.Query().Get("since")
	d, err := insights.ParseWindow(label)
	if label == "" || err != nil {
		label, d = "30d", 30*24*time.Hour
	}
	var links []windowLink
	for _, l := range insightsWindows {
		links = append(links, windowLink{Label: l, URL: base + "?since=" + l, Current: l == label})
	}
	return label, d, links
}

// insightsList lists the organization's processes.
func (in *Inbox) insightsList(w http.ResponseWriter, r *http.Request, s *session) {
	ir, ok := in.insightsReader(w, r, s)
	if !ok {
		return
	}
	label, since, links := window(r, Path+"insights")
	list, err := ir.InsightsProcesses(r.Context(), s.identity(), since)
	if err != nil {
		in.failTool(w, r, s, err)
		return
	}
	p := insightsListPage{frame: in.frame(s, "Insights", "insights"), Windows: links}
	for _, x := range list {
		p.Rows = append(p.Rows, insightsListRow{Process: x.Process, URL: Path + "insights/" + url.PathEscape(x.Process) + "?since=" + label,
			Open: x.Open, Overdue: x.Overdue, Started: x.Started})
	}
	in.render(w, http.StatusOK, "insights-list", p)
}

// insightsProcess shows one process's figures and map.
func (in *Inbox) insightsProcess(w http.ResponseWriter, r *http.Request, s *session) {
	ir, ok := in.insightsReader(w, r, s)
	if !ok {
		return
	}
	name := r.PathValue("process")
	_, since, links := window(r, Path+"insights/"+url.PathEscape(name))
	rep, proc, err := ir.Insights(r.Context(), s.identity(), name, since)
	if err != nil {
		in.failTool(w, r, s, err)
		return
	}
	rep.Link(func(runID, itemID string) string { return workflows.InboxLink(Path, runID, itemID) })
	p := insightsPage{
		frame: in.frame(s, "Insights: "+name, "insights"), Process: name, Windows: links,
		Since: rep.Since.UTC().Format("2006-01-02 15:04"), Until: rep.Until.UTC().Format("2006-01-02 15:04"),
		Map: processMap(proc, rep), Week: weekChart(rep.Days), Runs: rep.Runs, RunDuration: rep.Runs.Duration.Text(),
		Questions: rep.Questions, Routes: rep.Routes,
	}
	if rep.RecordedSince != nil {
		p.RecordedSince = rep.RecordedSince.UTC().Format("2006-01-02 15:04")
	}
	top := 0
	for _, o := range rep.Runs.Outcomes {
		top = max(top, o.Count)
	}
	for _, o := range rep.Runs.Outcomes {
		p.Outcomes = append(p.Outcomes, bar{Label: o.Outcome, Count: o.Count, Pct: pct(float64(o.Count), float64(top))})
	}
	longest := 0.0
	for _, st := range rep.Steps {
		for _, d := range []insights.Durations{st.ReadyToClaimed, st.ClaimedToDone, st.ReadyToDecided, st.EscalatedToDecided} {
			if d.P90 != nil {
				longest = max(longest, *d.P90)
			}
		}
	}
	for _, st := range rep.Steps {
		v := insightsStep{Step: st,
			AgentShare: insights.Share(st.AgentShare, st.Done), PersonShare: insights.Share(st.PersonShare, st.Done), TakenOver: insights.Share(st.TakenOverShare, st.Done),
			Rework: insights.Share(st.ReworkRate, st.Ended), Returned: insights.Share(st.ReturnRate, st.Attempts), Refused: fmt.Sprintf("%.2f", st.NotAcceptedPerAttempt)}
		for _, d := range []struct {
			name string
			d    insights.Durations
		}{{"ready → claimed", st.ReadyToClaimed}, {"claimed → done", st.ClaimedToDone}, {"ready → decided", st.ReadyToDecided}, {"escalated → decided", st.EscalatedToDecided}} {
			if d.d.N > 0 && d.d.Median != nil && d.d.P90 != nil {
				v.Waits = append(v.Waits, durationBar{Name: d.name, Text: d.d.Text(), Median: pct(*d.d.Median, longest), P90: pct(*d.d.P90, longest)})
			}
		}
		if st.Open.OldestAge != nil {
			v.OldestAge = insights.Seconds(*st.Open.OldestAge)
		}
		if st.Attempts > 0 {
			p.Steps = append(p.Steps, v)
		}
		if st.Open.Total() > 0 {
			p.Open = append(p.Open, v)
		}
	}
	for _, it := range rep.Oldest {
		p.Oldest = append(p.Oldest, oldestRow{OpenItem: it, URL: it.Link, Ready: it.ReadyAt.UTC().Format("2006-01-02 15:04"),
			Age: insights.Seconds(rep.Until.Sub(it.ReadyAt).Seconds())})
	}
	in.render(w, http.StatusOK, "insights", p)
}

// weekChart draws the last seven days' starts and ends as bars.
func weekChart(days []insights.Day) template.HTML {
	const h, barW, gap, top, foot = 90, 14, 18, 14, 30
	most := 1
	for _, d := range days {
		most = max(most, d.Started, d.Ended)
	}
	width := len(days)*(2*barW+gap) + gap
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="week" role="img" aria-label="Runs started and ended on each of the last seven days" viewBox="0 0 %d %d" width="%d" height="%d" xmlns="http://www.w3.org/2000/svg">`,
		width, h+top+foot, width, h+top+foot)
	for i, d := range days {
		x := gap + i*(2*barW+gap)
		for j, v := range []int{d.Started, d.Ended} {
			bh := v * h / most
			color := []string{"#1f4fa3", "#0b5d1e"}[j]
			class := []string{"started", "ended"}[j]
			fmt.Fprintf(&b, `<g class="%s" data-day="%s"><rect x="%d" y="%d" width="%d" height="%d" fill="%s"/><text x="%d" y="%d" font-size="10" text-anchor="middle">%d</text></g>`,
				class, esc(d.Day), x+j*barW, top+h-bh, barW-2, bh, color, x+j*barW+barW/2-1, top+h-bh-3, v)
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="10" text-anchor="middle">%s</text>`, x+barW, top+h+14, esc(d.Day[5:]))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) //nolint:gosec // every text in it went through esc
}

func pct(v, of float64) int {
	if of <= 0 {
		return 0
	}
	return int(v/of*100 + 0.5)
}
