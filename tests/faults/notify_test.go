package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/internal/notify"
	"github.com/baton-run/baton/internal/soak"
	"github.com/baton-run/baton/internal/testing/notifytest"
	"github.com/baton-run/baton/internal/testing/spectest"
	"github.com/baton-run/baton/interpreter"
)

// notifyOrg is the organization whose runs notify a webhook here.
const notifyOrg = "o_notify"

// A worker killed with -9 while it posts an event to a signed webhook
// loses nothing and sends nothing the receiver cannot tell apart: every
// event of every run arrives, each signature verifies, and after
// deduplicating by id each event is there once; the post cut by the kill
// is sent again, with the same id, by the worker that comes back.
func TestNotifyWebhookSurvivesWorkerKill(t *testing.T) {
	secret := []byte("whsec_faults")
	hook := notifytest.StartReceiver(secret)
	defer hook.Close()
	dir := t.TempDir()
	secretFile := filepath.Join(dir, "hook.secret")
	channels := filepath.Join(dir, "notify.yaml")
	if err := os.WriteFile(secretFile, append(secret, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(channels, fmt.Appendf(nil, "channels:\n  - kind: webhook\n    name: hook\n    url: %s\n    secret: { file: hook.secret }\n", hook.URL), 0o600); err != nil {
		t.Fatal(err)
	}

	// The first post of an approval's work.opened waits, so the worker is
	// killed in the middle of it.
	var once sync.Once
	held := make(chan notify.Event, 1)
	release := make(chan struct{})
	hook.Hold(func(ev notify.Event) <-chan struct{} {
		var wait <-chan struct{}
		if ev.Type == string(interpreter.NoticeWorkOpened) {
			once.Do(func() { held <- ev; wait = release })
		}
		return wait
	})
	defer close(release)

	// A gateway and a worker of their own, on a task queue of their own,
	// so only this worker runs these runs and their deliveries.
	ports, err := freePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(ports[0])
	queue := []string{"--task-queue", "notify-faults"}
	g := dep.gateway("gateway-notify", addr, notifyOrg)
	g.Args = append(g.Args, queue...)
	w := dep.worker("worker-notify")
	w.Args = append(append(w.Args, queue...), "--notify", notifyOrg+"="+channels, "--inbox-url", "http://"+addr+"/inbox/")
	for _, p := range []*soak.Process{w, g} {
		if err := p.Start(time.Minute); err != nil {
			t.Fatal(err)
		}
		defer p.Stop()
	}
	defer func() {
		for _, p := range []*soak.Process{w, g} {
			for _, line := range p.Panics() {
				t.Errorf("%s panicked: %s", p.Name, line)
			}
			for _, e := range p.UnexpectedExits() {
				t.Errorf("%s: %s", p.Name, e)
			}
		}
	}()
	if err := dep.publish(spectest.FixtureDir(t, "invoice-approval"), "invoice-approval", notifyOrg); err != nil {
		t.Fatal(err)
	}
	d := drive.NewMCP("http://"+addr+"/mcp", dep.token, nil)
	defer d.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	const runs = 4
	var ids []string
	items := map[string]interpreter.WorkItem{}
	for i := range runs {
		runID, item := validatedInvoice(ctx, t, d, fmt.Sprintf("INV-%d", i))
		ids = append(ids, runID)
		items[runID] = item
		if i == 0 {
			select {
			case ev := <-held:
				if ev.Run.ID != runID {
					t.Fatalf("held %+v, want run %s's work.opened", ev, runID)
				}
			case <-time.After(time.Minute):
				t.Fatal("the first work.opened was not posted within a minute")
			}
			w.Kill()
			time.Sleep(time.Second)
			if err := w.Start(time.Minute); err != nil {
				t.Fatalf("restart %s: %v", w.Name, err)
			}
		}
	}
	manager := drive.Who{ID: "rita@acme.example", Kind: interpreter.ActorPerson}
	for _, runID := range ids {
		it := items[runID]
		if _, err := d.Decide(ctx, manager, runID, drive.Decision{WorkItemID: it.ID, Snapshot: it.Snapshot, Decision: interpreter.DecisionRejected, Note: ptr("Not ours.")}); err != nil {
			t.Fatalf("decide %s: %v", runID, err)
		}
	}

	// Each run: its approval opened and decided, and its end.
	want := map[string]bool{}
	for _, runID := range ids {
		for _, typ := range []interpreter.NoticeType{interpreter.NoticeWorkOpened, interpreter.NoticeWorkDecided, interpreter.NoticeRunEnded} {
			want[runID+" "+string(typ)] = true
		}
	}
	got, ok := hook.Await(2*time.Minute, func(evs []notify.Event) bool { return len(evs) >= len(want) })
	if !ok {
		t.Fatalf("%d events arrived, want %d: %+v\n%s", len(got), len(want), got, w.Tail())
	}
	time.Sleep(2 * time.Second) // a late duplicate would arrive now
	got = hook.Events()
	seen := map[string]int{}
	for _, ev := range got {
		key := ev.Run.ID + " " + ev.Type
		if !want[key] || ev.Org != notifyOrg {
			t.Errorf("an event no run made: %+v", ev)
		}
		seen[key]++
	}
	for key := range want {
		if seen[key] != 1 {
			t.Errorf("%s: %d events after deduplicating by id, want 1", key, seen[key])
		}
	}
	first := got[slices.IndexFunc(got, func(ev notify.Event) bool { return ev.Run.ID == ids[0] && ev.Type == "work.opened" })]
	if hook.Posts(first.ID) < 1 || first.Link == nil || !strings.HasSuffix(*first.Link, "/runs/"+ids[0]+"/items/"+items[ids[0]].ID) {
		t.Errorf("the held event %+v (%d posts taken)", first, hook.Posts(first.ID))
	}
	if n := hook.Refused(); n != 0 {
		t.Errorf("%d posts failed the signature check", n)
	}
	// A body changed on the way is refused.
	body, _ := json.Marshal(first)
	tampered := bytes.Replace(body, []byte(`"work.opened"`), []byte(`"run.ended"`), 1)
	req, _ := http.NewRequest(http.MethodPost, hook.URL, bytes.NewReader(tampered))
	req.Header.Set(notify.SignatureHeader, notify.Sign(secret, time.Now(), body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || hook.Refused() != 1 {
		t.Errorf("a tampered body got %s", resp.Status)
	}

	// The deliveries log says each was delivered.
	cmd := exec.Command(binary, "notify", "log", "--database-url", dep.dbURL, "--org", notifyOrg, "--json", "--limit", "100")
	cmd.Env = soak.ChildEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("baton notify log: %v\n%s", err, out)
	}
	delivered := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var row struct{ State, Channel string }
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatalf("notify log line %q: %v", line, err)
		}
		if row.State == "delivered" && row.Channel == "hook" {
			delivered++
		}
	}
	if delivered != len(want) {
		t.Errorf("notify log shows %d deliveries delivered, want %d:\n%s", delivered, len(want), out)
	}
}

func ptr(s string) *string { return &s }

// validatedInvoice starts an invoice-approval run that the agent routes
// to its manager, and returns it with the manager's approval item.
func validatedInvoice(ctx context.Context, t *testing.T, d *drive.MCP, invoice string) (string, interpreter.WorkItem) {
	t.Helper()
	starter := drive.Who{ID: "mira@acme.example", Kind: interpreter.ActorPerson}
	agent := drive.Who{ID: "a_ap", Kind: interpreter.ActorAgent}
	v, err := d.Start(ctx, starter, "invoice-approval", map[string]any{
		"invoiceId": invoice, "invoiceDocument": "https://erp.acme.example/" + invoice, "manager": "rita@acme.example",
	}, interpreter.ModeLive)
	if err != nil {
		t.Fatal(err)
	}
	runID := v.Run.ID
	c, err := d.Claim(ctx, agent, runID, "validate")
	if err != nil {
		t.Fatal(err)
	}
	next, reason, summary := "manager_review", "Under 10000.", "Matched."
	v, err = d.Submit(ctx, agent, c.Token, drive.Work{
		Output:   map[string]any{"totalUsd": 900, "supplier": "Acme Tools", "matchSummary": "PO and GR match."},
		Evidence: []interpreter.Evidence{{Kind: "link", Ref: "https://erp.acme.example/match/" + invoice}},
		Summary:  &summary, Next: &next, Reason: &reason,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range v.WorkItems {
		if it.StepID == next {
			return runID, it
		}
	}
	t.Fatalf("run %s has no manager_review item", runID)
	return "", interpreter.WorkItem{}
}
