package tests

import (
	"context"
	"flag"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/baton-run/baton/internal/insights"
)

// insightsShot asks the insights browser test to write its picture of the
// map to this file; docs/insights.png is taken so:
// go test ./tests -run 'TestInsights$' -args -insights.screenshot=$PWD/docs/insights.png
var insightsShot = flag.String("insights.screenshot", "", "write the insights page's map, as the browser shows it, to this PNG file")

// browser starts headless Chromium at path, in a window of width×height.
func browser(t *testing.T, path string, width, height int) (context.Context, func()) {
	t.Helper()
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(width, height),
	)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	ctx, cancelTime := context.WithTimeout(ctx, 3*time.Minute)
	return ctx, func() { cancelTime(); cancelCtx(); cancelAlloc() }
}

// insightsBrowser opens the insights pages in Chromium as an operator,
// after the runs of insightsScenario, and finds the figures on the map and
// in the tables; a person who is not an operator gets 403.
func insightsBrowser(t *testing.T, s *lettersRun, want *insights.Report) {
	ctx, cancel := browser(t, chromium(t), 1200, 900)
	defer cancel()
	b := s.b
	open := func(what, url string, status int) {
		t.Helper()
		resp, err := chromedp.RunResponse(ctx, chromedp.Navigate(b.url+url))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if resp.Status != int64(status) {
			t.Fatalf("%s: status %d, want %d", what, resp.Status, status)
		}
	}
	signIn := func(kind, id, groups string) {
		t.Helper()
		open("the sign-in page", "/inbox/signin", http.StatusOK)
		form := `form:has(input[name=kind][value=` + kind + `]) `
		actions := []chromedp.Action[chromedp.Void]{chromedp.SetValue(chromedp.CSS(form+`input[name=id]`), id)}
		if groups != "" {
			actions = append(actions, chromedp.SetValue(chromedp.CSS(form+`input[name=groups]`), groups))
		}
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("fill in %s: %v", id, err)
		}
		if _, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(form+`button[type=submit]`))); err != nil {
			t.Fatalf("sign in as %s: %v", id, err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("%s: %v", sel, err)
		}
		return strings.TrimSpace(s)
	}
	expect := func(what, sel, want string) {
		t.Helper()
		if got := text(sel); got != want {
			t.Errorf("%s (%s): %q, want %q", what, sel, got, want)
		}
	}

	signIn("operator", "u_ops", "")
	open("the list of processes", "/inbox/insights", http.StatusOK)
	if row := text(`#processes tr:has(a[href^="/inbox/insights/letters"])`); !strings.Contains(row, "letters") {
		t.Fatalf("the list: %q", row)
	}
	open("the letters' insights", "/inbox/insights/letters", http.StatusOK)

	d, r := want.Step("draft"), want.Step("review")
	// On the map: each step's open and overdue work, each edge's count.
	expect("the draft's open work on the map", `g.node[data-step="draft"] tspan.open`, "open 1")
	expect("the draft's overdue work on the map", `g.node[data-step="draft"] tspan.overdue`, "overdue 1")
	expect("the review's open work on the map", `g.node[data-step="review"] tspan.open`, "open 0")
	expect("runs started, on the start edge", `g.edge[data-from="start"] tspan.count`, "3")
	expect("drafts sent to review", `g.edge[data-from="st_draft"][data-to="st_review"] tspan.count`, "2")
	expect("reviews sent back", `g.edge[data-from="st_review"][data-to="st_draft"] tspan.count`, "1")
	expect("reviews approved", `g.edge[data-from="st_review"][data-to="st_done"] tspan.count`, "1")
	// In the tables.
	expect("runs started", `#runs tr:nth-child(2) td:nth-child(1)`, "3")
	expect("runs ended", `#runs tr:nth-child(2) td:nth-child(2)`, "2")
	expect("draft attempts", `#steps tr[data-step="draft"] td.attempts`, strconv.Itoa(d.Attempts))
	expect("review attempts", `#steps tr[data-step="review"] td.attempts`, strconv.Itoa(r.Attempts))
	expect("draft leases expired", `#steps tr[data-step="draft"] td.leases`, "1")
	expect("draft taken over", `#steps tr[data-step="draft"] td.taken-over`, "50%")
	expect("review rework", `#steps tr[data-step="review"] td.rework`, "50%")
	expect("draft refused per attempt", `#steps tr[data-step="draft"] td.refused`, "0.50")
	expect("drafts ready now", `#open tr[data-step="draft"] td.ready`, "1")
	expect("drafts overdue now", `#open tr[data-step="draft"] td.overdue`, "1")
	expect("unsure answers", `#questions tr[data-step="draft"][data-question="0"] td.unsure`, "1")
	expect("unsure answers returned", `#questions tr[data-step="draft"][data-question="0"] td.returned`, "1")
	expect("failed answers", `#questions tr[data-step="draft"][data-question="0"] td.fail`, "1")
	if link := text(`#oldest a`); link != s.open.Run.ID {
		t.Errorf("the oldest open work links %q, want run %s", link, s.open.Run.ID)
	}
	if *insightsShot != "" {
		buf, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(`.mapbox`)))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(*insightsShot, buf, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes)", *insightsShot, len(buf))
	}

	// A person who is not an operator.
	if _, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`header form button[type=submit]`))); err != nil {
		t.Fatalf("sign out: %v", err)
	}
	signIn("person", "rev@example.com", "reviewers")
	open("the letters' insights as a reviewer", "/inbox/insights/letters", http.StatusForbidden)
	open("the list as a reviewer", "/inbox/insights", http.StatusForbidden)
}
