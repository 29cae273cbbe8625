package binary

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/interpreter"
)

// held is what one organization holds when the other looks: a run
// waiting on its reviewer, with a ticket and a letter, and an ended run.
type held struct {
	deciding, ended *intake
}

// hold walks the two runs of org.
func hold(ctx context.Context, t *testing.T, org string) held {
	t.Helper()
	drv := dev.driver(t, org)
	deciding, err := walkIntake(ctx, drv, org+"-deciding", false)
	if err != nil {
		t.Fatalf("%s: %v", org, err)
	}
	ended, err := walkIntake(ctx, drv, org+"-ended", true)
	if err != nil {
		t.Fatalf("%s: %v", org, err)
	}
	return held{deciding, ended}
}

// marks are the strings that name what h holds: none may appear in
// anything the other organization is answered. (Work item ids are a run's
// own, w_1 and on, in every run.)
func (h held) marks() []string {
	var out []string
	for _, in := range []*intake{h.deciding, h.ended} {
		out = append(out, in.runID, in.file, in.fileName, in.subject)
	}
	return out
}

// leaks fails t for each mark of h that text shows.
func leaks(t *testing.T, what, text string, h held) {
	t.Helper()
	for _, m := range h.marks() {
		if strings.Contains(text, m) {
			t.Errorf("%s shows %q of the other organization:\n%s", what, m, text)
		}
	}
}

// One baton dev serves two organizations, and each sees nothing of the
// other's: an inbox session of one never shows the other's items, runs or
// files, an MCP caller of one finds none of them, and a tool call of one
// goes to its own organization's registration, never the other's.
func TestOrganizationsStayApart(t *testing.T) {
	defer dev.checkHealthy(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	a, b := hold(ctx, t, orgA), hold(ctx, t, orgB)

	t.Run("inbox", func(t *testing.T) {
		for _, side := range []struct {
			org         string
			own, others held
		}{{orgA, a, b}, {orgB, b, a}} {
			br := newBrowser(t)
			br.signIn(side.org, reviewer)
			home, runs := br.get("/inbox/"), br.get("/inbox/runs")
			// Each session sees its own: the checks below can fail.
			if !strings.Contains(home.body, side.own.deciding.item.ID) || !strings.Contains(runs.body, side.own.deciding.runID) {
				t.Fatalf("%s's inbox does not show its own item %s and run %s:\n%s\n%s", side.org, side.own.deciding.item.ID, side.own.deciding.runID, home.body, runs.body)
			}
			own := br.get("/inbox/runs/" + side.own.deciding.runID)
			if own.status != http.StatusOK || !strings.Contains(own.body, side.own.deciding.file) {
				t.Fatalf("%s's own run page: %d, want it with the letter %s:\n%s", side.org, own.status, side.own.deciding.file, own.body)
			}
			for _, p := range []page{home, runs, br.get("/inbox/escalations"), br.get("/inbox/runs?state=ended")} {
				leaks(t, side.org+"'s inbox "+p.url, p.body, side.others)
			}
			for _, in := range []*intake{side.others.deciding, side.others.ended} {
				for _, path := range []string{"/inbox/runs/" + in.runID, "/inbox/runs/" + in.runID + "/items/w_1"} {
					p := br.get(path)
					if p.status != http.StatusNotFound {
						t.Errorf("%s's session got %s of the other organization: %d, want 404", side.org, path, p.status)
					}
					// The refusal names the run asked for; nothing else.
					leaks(t, side.org+"'s inbox "+path, strings.ReplaceAll(p.body, in.runID, "RUN"), side.others)
				}
			}
		}
	})

	t.Run("mcp", func(t *testing.T) {
		for _, side := range []struct {
			org    string
			others held
		}{{orgA, b}, {orgB, a}} {
			drv := dev.driver(t, side.org)
			for _, in := range []*intake{side.others.deciding, side.others.ended} {
				if _, err := drv.GetRun(ctx, reviewer, in.runID); !isCode(err, interpreter.CodeNotFound) {
					t.Errorf("get_run of the other organization's run from %s: %v, want not_found", side.org, err)
				}
			}
			var list, work json.RawMessage
			if err := drv.Call(ctx, operator, "list_runs", map[string]any{"limit": 100}, &list); err != nil {
				t.Fatal(err)
			}
			leaks(t, side.org+"'s list_runs", string(list), side.others)
			if err := drv.Call(ctx, reviewer, "get_work", map[string]any{"limit": 100}, &work); err != nil {
				t.Fatal(err)
			}
			leaks(t, side.org+"'s get_work", string(work), side.others)
			// The other organization's letter, as evidence of one's own
			// step, is a file that does not exist.
			v, err := drv.Start(ctx, starter, "intake", nil, "")
			if err != nil {
				t.Fatal(err)
			}
			c, err := drv.Claim(ctx, agent, v.Run.ID, "open")
			if err != nil {
				t.Fatal(err)
			}
			summary := "With the other letter."
			_, err = drv.Submit(ctx, agent, c.Token, drive.Work{Output: map[string]any{"ticket": "T-1"}, Summary: &summary,
				Evidence: []interpreter.Evidence{{Kind: "file", Ref: side.others.deciding.file}}})
			if !isCode(err, interpreter.CodeNotAccepted) || !strings.Contains(err.Error(), side.others.deciding.file) {
				t.Errorf("%s submitting the other organization's file %s: %v, want not_accepted naming it", side.org, side.others.deciding.file, err)
			}
			if _, err := drv.Cancel(ctx, operator, v.Run.ID, "Done testing."); err != nil {
				t.Fatal(err)
			}
		}
	})

	t.Run("call_tool", func(t *testing.T) {
		// Every call a crm received came from a run of its organization:
		// the subjects name the organization that called. Each got some.
		for _, org := range []string{orgA, orgB} {
			calls := dev.crm[org].Calls("create_ticket")
			if len(calls) == 0 {
				t.Errorf("the crm of %s received no call", org)
			}
			for _, c := range calls {
				var args struct {
					Subject string `json:"subject"`
				}
				_ = json.Unmarshal(c.Arguments, &args)
				if !strings.HasPrefix(args.Subject, "letter "+org+"-") {
					t.Errorf("the crm of %s received %s: a call of another organization", org, c.Arguments)
				}
			}
		}
	})
}

// baton token --org mints a token of that organization: its claims name
// it, and the gateway takes its calls as that organization's; without
// --org the token names none and belongs to the default organization.
func TestTokenOrg(t *testing.T) {
	defer dev.checkHealthy(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, tc := range []struct {
		name, org, claim string // claim: the org claim the token carries
	}{
		{"with --org", orgB, orgB},
		{"without --org", orgA, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok, err := dev.token(tc.org, starter)
			if err != nil {
				t.Fatal(err)
			}
			if got := orgClaim(t, tok); got != tc.claim {
				t.Errorf("the token's org claim is %q, want %q", got, tc.claim)
			}
			// A run it starts is its organization's: the other one's
			// token finds none.
			other := orgA
			if tc.org == orgA {
				other = orgB
			}
			v, err := dev.driver(t, tc.org).Start(ctx, starter, "intake", nil, "")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := dev.driver(t, tc.org).GetRun(ctx, starter, v.Run.ID); err != nil {
				t.Errorf("get_run with the token that started it: %v", err)
			}
			if _, err := dev.driver(t, other).GetRun(ctx, starter, v.Run.ID); !isCode(err, interpreter.CodeNotFound) {
				t.Errorf("get_run from %s: %v, want not_found", other, err)
			}
			out, err := baton("runs", "show", "--url", dev.mcpURL, "--data", dev.data, "--org", tc.org, "--json", v.Run.ID)
			if err != nil || !strings.Contains(out, v.Run.ID) {
				t.Errorf("baton runs show in %s: %v\n%s", tc.org, err, out)
			}
			if _, err := dev.driver(t, tc.org).Cancel(ctx, operator, v.Run.ID, "Done testing."); err != nil {
				t.Fatal(err)
			}
		})
	}
	if _, err := baton("token", "--data", dev.data, "--org", "Not An Org", "--agent", "a_x"); err == nil {
		t.Error("baton token took an organization that is not a valid id")
	}
}

// orgClaim is the org claim of a token, "" when it has none.
func orgClaim(t *testing.T, tok string) string {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("the token is not a JWT: %q", tok)
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims map[string]any
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatal(err)
	}
	org, _ := claims["org"].(string)
	return org
}

// baton runs --org lists, shows and cancels the runs of that
// organization, and finds none of another's.
func TestRunsOrg(t *testing.T) {
	defer dev.checkHealthy(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	runsIn := map[string]string{}
	for _, org := range []string{orgA, orgB} {
		v, err := dev.driver(t, org).Start(ctx, starter, "intake", nil, "")
		if err != nil {
			t.Fatal(err)
		}
		runsIn[org] = v.Run.ID
	}
	runs := func(org string, args ...string) (string, error) {
		full := append([]string{"runs"}, args[0])
		full = append(full, "--url", dev.mcpURL, "--data", dev.data)
		if org != orgA {
			full = append(full, "--org", org)
		}
		return baton(append(full, args[1:]...)...)
	}
	for _, tc := range []struct{ org, other string }{{orgA, orgB}, {orgB, orgA}} {
		mine, theirs := runsIn[tc.org], runsIn[tc.other]
		out, err := runs(tc.org, "list", "--json", "--process", "intake", "--limit", "100")
		if err != nil {
			t.Fatal(err)
		}
		var list struct {
			Items []struct {
				ID string `json:"id"`
			} `json:"items"`
		}
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			t.Fatalf("baton runs list --json in %s: %v\n%s", tc.org, err, out)
		}
		seen := map[string]bool{}
		for _, it := range list.Items {
			seen[it.ID] = true
		}
		if !seen[mine] || seen[theirs] {
			t.Errorf("baton runs list in %s: lists its run %v, the other's %v; want its own only", tc.org, seen[mine], seen[theirs])
		}
		if out, err := runs(tc.org, "show", theirs); err == nil || !strings.Contains(err.Error(), "refused: not_found") {
			t.Errorf("baton runs show of the other organization's run from %s: %v, want refused: not_found\n%s", tc.org, err, out)
		}
		if out, err := runs(tc.org, "show", mine); err != nil || !strings.Contains(out, mine) {
			t.Errorf("baton runs show of its own run in %s: %v\n%s", tc.org, err, out)
		}
		if _, err := runs(tc.org, "cancel", "--reason", "Not ours.", theirs); err == nil {
			t.Errorf("baton runs cancel of the other organization's run from %s succeeded", tc.org)
		}
	}
	// The cancellations refused left both runs as they were; each
	// organization cancels its own.
	for _, org := range []string{orgA, orgB} {
		if _, err := runs(org, "cancel", "--reason", "Done testing.", runsIn[org]); err != nil {
			t.Errorf("baton runs cancel of its own run in %s: %v", org, err)
		}
		v, err := dev.driver(t, org).GetRun(ctx, operator, runsIn[org])
		if err != nil || v.Run.State != string(interpreter.RunCancelled) {
			t.Errorf("%s's run after its cancel: %v %v, want cancelled", org, v, err)
		}
	}
}

// isCode reports whether err is a refusal with code.
func isCode(err error, code interpreter.Code) bool {
	var e *interpreter.Error
	return errors.As(err, &e) && e.Code == code
}
