package notify_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/baton-run/baton/internal/notify"
	"github.com/baton-run/baton/internal/testing/notifytest"
	"github.com/baton-run/baton/interpreter"
)

func TestSignatureVerifies(t *testing.T) {
	secret := []byte("whsec_test")
	body := []byte(`{"id":"ev_1"}`)
	at := time.Unix(1791277200, 0)
	h := Sign(secret, at, body)
	if !strings.HasPrefix(h, "t=1791277200,v1=") || len(h) != len("t=1791277200,v1=")+64 {
		t.Fatalf("header %q", h)
	}
	for _, tc := range []struct {
		name   string
		secret []byte
		header string
		body   []byte
		now    time.Time
		ok     bool
	}{
		{"as sent", secret, h, body, at.Add(time.Minute), true},
		{"tampered body", secret, h, []byte(`{"id":"ev_2"}`), at, false},
		{"other secret", []byte("whsec_other"), h, body, at, false},
		{"replayed later", secret, h, body, at.Add(10 * time.Minute), false},
		{"no signature", secret, "t=1791277200", body, at, false},
		{"rotated: two signatures", secret, h + ",v1=" + strings.Repeat("0", 64), body, at, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Verify(tc.secret, tc.header, tc.body, tc.now, 0)
			if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrSignature)) {
				t.Fatalf("Verify: %v, want ok %v", err, tc.ok)
			}
		})
	}
}

// A webhook channel posts the event's JSON, signed, with exactly the
// documented keys; a receiver checking the signature takes it.
func TestWebhookPostsTheSignedEvent(t *testing.T) {
	t.Setenv("NOTIFY_TEST_SECRET", "whsec_0123")
	r := notifytest.StartReceiver([]byte("whsec_0123"))
	defer r.Close()
	f, err := Parse([]byte("channels:\n  - kind: webhook\n    url: "+r.URL+"\n    secret: { env: NOTIFY_TEST_SECRET }\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	n, err := New(map[string]*File{"o_acme": f}, &Options{Link: Link})
	if err != nil {
		t.Fatal(err)
	}
	no := SampleNotice(interpreter.NoticeWorkOpened)
	if got := n.Plan("o_acme", no); !slices.Equal(got, []string{"webhook-1"}) {
		t.Fatalf("plan %v", got)
	}
	if got := n.Plan("o_other", no); len(got) != 0 {
		t.Fatalf("another organization's plan %v", got)
	}
	if err := n.Deliver(context.Background(), "o_acme", "webhook-1", no); err != nil {
		t.Fatal(err)
	}
	evs := r.Events()
	if len(evs) != 1 || evs[0].ID != no.ID || evs[0].Org != "o_acme" || evs[0].Link == nil || *evs[0].Link != Link("r_1", "w_1") {
		t.Fatalf("received %+v", evs)
	}
	var raw map[string]any
	b, _ := json.Marshal(NewEvent("o_acme", no, Link))
	_ = json.Unmarshal(b, &raw)
	if got := keys(raw); got != "at,id,link,org,run,type,workItem" {
		t.Fatalf("event keys %s", got)
	}
	if got := keys(raw["run"].(map[string]any)); got != "id,mode,process,version" {
		t.Fatalf("run keys %s", got)
	}
	if got := keys(raw["workItem"].(map[string]any)); got != "assignedTo,due,id,kind,stepId,title" {
		t.Fatalf("workItem keys %s", got)
	}
	// The same post under another secret is refused.
	t.Setenv("NOTIFY_TEST_SECRET", "whsec_wrong")
	err = n.Deliver(context.Background(), "o_acme", "webhook-1", no)
	if err == nil || !strings.Contains(err.Error(), "401") || r.Refused() != 1 {
		t.Fatalf("a post signed with another secret: %v (refused %d)", err, r.Refused())
	}
	if strings.Contains(err.Error(), "whsec") {
		t.Fatalf("the error holds the secret: %v", err)
	}
}

func keys(m map[string]any) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return strings.Join(ks, ",")
}

// A URL that is a secret never appears in an error; plain http beyond
// loopback is refused when read from a reference; a redirect is not
// followed.
func TestWebhookErrorsHoldNoSecret(t *testing.T) {
	secretPath := "/services/T000/B000/XXXXsecretXXXX"
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		http.Redirect(w, req, "http://elsewhere.example/", http.StatusFound)
	}))
	defer redirect.Close()
	for _, tc := range []struct {
		name, url, want string
		permanent       bool
	}{
		{"plain http beyond loopback", "http://hooks.example.com" + secretPath, "plain http only to a loopback host", true},
		{"refused connection", "http://127.0.0.1:1" + secretPath, "connection refused", false},
		{"redirect", redirect.URL + secretPath, "follows no redirect", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("NOTIFY_TEST_URL", tc.url)
			f, err := Parse([]byte("channels:\n  - kind: webhook\n    format: slack\n    url: { env: NOTIFY_TEST_URL }\n"), nil)
			if err != nil {
				t.Fatal(err)
			}
			n, _ := New(map[string]*File{"o_acme": f}, nil)
			err = n.Deliver(context.Background(), "o_acme", "webhook-1", SampleNotice(interpreter.NoticeWorkOpened))
			if err == nil || !strings.Contains(err.Error(), tc.want) || errors.Is(err, ErrPermanent) != tc.permanent {
				t.Fatalf("error %v, want %q (permanent %v)", err, tc.want, tc.permanent)
			}
			if strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "XXXX") {
				t.Fatalf("the error holds the url's secret path: %v", err)
			}
		})
	}
}

func TestRecipients(t *testing.T) {
	c := &Channel{Kind: KindEmail, Groups: map[string]string{"finance-approver": "Finance@acme.example", "operators": "ops@acme.example"}}
	agentStarted := SampleNotice(interpreter.NoticeRunEnded)
	agentStarted.Run.StartedBy = interpreter.Actor{ID: "a_intake", Kind: interpreter.ActorAgent}
	personItem := SampleNotice(interpreter.NoticeWorkOpened)
	personItem.WorkItem.AssignedTo = interpreter.Assignee{Person: "rita@acme.example"}
	decidedByAssignee := SampleNotice(interpreter.NoticeWorkDecided)
	decidedByAssignee.WorkItem.AssignedTo = interpreter.Assignee{Person: "fin@acme.example"}
	unmapped := SampleNotice(interpreter.NoticeWorkOpened)
	unmapped.WorkItem.AssignedTo = interpreter.Assignee{Group: "cfo"}
	call := SampleNotice(interpreter.NoticeCallAwaitingApproval)
	call.WorkItem.AssignedTo, call.WorkItem.AlsoGroups = interpreter.Assignee{Group: "cfo"}, []string{"finance-approver"}
	for _, tc := range []struct {
		name string
		n    *interpreter.Notice
		want []string
	}{
		{"a group's item goes to its address", SampleNotice(interpreter.NoticeWorkOpened), []string{"finance@acme.example"}},
		{"a person's item to the person", personItem, []string{"rita@acme.example"}},
		{"overdue to the assignee and the operators", SampleNotice(interpreter.NoticeWorkOverdue), []string{"finance@acme.example", "ops@acme.example"}},
		{"decided to the group", SampleNotice(interpreter.NoticeWorkDecided), []string{"finance@acme.example"}},
		{"decided by the assignee: nobody", decidedByAssignee, nil},
		{"run ended to the person who started it", SampleNotice(interpreter.NoticeRunEnded), []string{"mira@acme.example"}},
		{"run ended started by an agent: nobody", agentStarted, nil},
		{"an unmapped group: nobody", unmapped, nil},
		{"a call's approver groups", call, []string{"finance@acme.example"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Recipients(c, tc.n); !slices.Equal(got, tc.want) {
				t.Fatalf("recipients %v, want %v", got, tc.want)
			}
		})
	}
}

// An email channel mails over STARTTLS, logged in, to the recipients,
// with the item's title, the inbox link and only the inputs it names.
func TestEmailOverStartTLS(t *testing.T) {
	dir := t.TempDir()
	srv, err := notifytest.StartSMTP(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	pw := filepath.Join(dir, "smtp.pw")
	if err := os.WriteFile(pw, []byte(srv.Password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	src := "channels:\n  - kind: email\n    smtp: { host: 127.0.0.1, port: " + strconv.Itoa(srv.Port) + ", username: baton, password: { file: smtp.pw }, ca: smtp-ca.pem }\n" +
		"    from: baton@acme.example\n    groups: { finance-approver: finance-approvals@acme.example }\n    include_inputs: [invoiceId]\n"
	f, err := Parse([]byte(src), &ParseOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	inputs := func(ctx context.Context, org, runID string) (map[string]any, error) {
		return map[string]any{"invoiceId": "INV-42", "bankAccount": "DE89 3704 0044 0532 0130 00"}, nil
	}
	n, _ := New(map[string]*File{"o_acme": f}, &Options{Link: Link, Inputs: inputs})
	no := SampleNotice(interpreter.NoticeWorkOpened)
	if err := n.Deliver(context.Background(), "o_acme", "email-1", no); err != nil {
		t.Fatal(err)
	}
	mails := srv.Mails()
	if len(mails) != 1 {
		t.Fatalf("%d mails", len(mails))
	}
	m := mails[0]
	if !m.TLS || m.User != "baton" || m.From != "baton@acme.example" || !slices.Equal(m.To, []string{"finance-approvals@acme.example"}) {
		t.Fatalf("mail envelope %+v", m)
	}
	if m.Subject != "Approval for group finance-approver: Approve only if totalUsd is above 10000 & <= 100000 (invoice-approval)" {
		t.Fatalf("subject %q", m.Subject)
	}
	for _, part := range []string{m.Text, m.HTML} {
		if !strings.Contains(part, Link("r_1", "w_1")) || !strings.Contains(part, "INV-42") || strings.Contains(part, "DE89") {
			t.Fatalf("body:\n%s", part)
		}
	}
	if !strings.Contains(m.HTML, "&amp; &lt;= 100000") {
		t.Fatalf("the HTML does not escape the title:\n%s", m.HTML)
	}
	if m.Header.Get("Message-Id") != "<"+no.ID+".email-1@baton>" {
		t.Fatalf("message id %q", m.Header.Get("Message-Id"))
	}
	// A wrong password is an error that does not hold it.
	if err := os.WriteFile(pw, []byte("hunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err = n.Deliver(context.Background(), "o_acme", "email-1", no)
	if err == nil || strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), srv.Password) {
		t.Fatalf("a refused login: %v", err)
	}
}

// The three lines of Go that docs/notifications.md gives a receiver
// accept Baton's signature and refuse a tampered body.
func TestSignatureCheckOfTheDocs(t *testing.T) {
	secret := []byte("whsec_docs")
	body := []byte(`{"id":"ev_1","type":"work.opened"}`)
	check := func(header string, body []byte) bool {
		r := &http.Request{Header: http.Header{"Baton-Signature": {header}}}
		t, sig, _ := strings.Cut(strings.TrimPrefix(r.Header.Get("Baton-Signature"), "t="), ",v1=")
		mac := hmac.New(sha256.New, secret)
		mac.Write([]byte(t + "."))
		mac.Write(body)
		sec, _ := strconv.ParseInt(t, 10, 64)
		ok := hmac.Equal([]byte(sig), []byte(hex.EncodeToString(mac.Sum(nil)))) && time.Since(time.Unix(sec, 0)).Abs() < 5*time.Minute
		return ok
	}
	h := Sign(secret, time.Now(), body)
	if !check(h, body) {
		t.Fatal("the documented check refuses Baton's signature")
	}
	if check(h, []byte(`{"id":"ev_1","type":"run.ended"}`)) || check(Sign(secret, time.Now().Add(-time.Hour), body), body) {
		t.Fatal("the documented check accepts a tampered body or an old signature")
	}
}

// --webhook still gets every organization's overdue work, and nothing
// else, in the body it always had: unsigned, {"event":"step_overdue",
// "org", "effect", "url"}.
func TestDeploymentWebhookKeepsItsOverdueBody(t *testing.T) {
	var (
		mu     sync.Mutex
		bodies [][]byte
		signed int
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		mu.Lock()
		defer mu.Unlock()
		bodies = append(bodies, b)
		if req.Header.Get("Baton-Signature") != "" {
			signed++
		}
	}))
	defer srv.Close()
	n, err := New(nil, &Options{Webhook: srv.URL, Link: Link})
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []interpreter.NoticeType{interpreter.NoticeWorkOpened, interpreter.NoticeWorkDecided, interpreter.NoticeRunEnded} {
		if got := n.Plan("o_acme", SampleNotice(typ)); len(got) != 0 {
			t.Fatalf("--webhook takes %s: %v", typ, got)
		}
	}
	no := SampleNotice(interpreter.NoticeWorkOverdue)
	for _, org := range []string{"o_acme", "o_other"} {
		if got := n.Plan(org, no); !slices.Equal(got, []string{LegacyChannel}) {
			t.Fatalf("plan of %s's overdue work: %v", org, got)
		}
	}
	if err := n.Deliver(context.Background(), "o_acme", LegacyChannel, no); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 1 || signed != 0 {
		t.Fatalf("%d posts, %d signed", len(bodies), signed)
	}
	var got struct {
		Event  string `json:"event"`
		Org    string `json:"org"`
		URL    string `json:"url"`
		Effect struct {
			Kind       string               `json:"kind"`
			RunID      string               `json:"runId"`
			Org        string               `json:"org"`
			StepID     string               `json:"stepId"`
			WorkItemID string               `json:"workItemId"`
			AssignedTo interpreter.Assignee `json:"assignedTo"`
			Operators  string               `json:"operators"`
			Due        time.Time            `json:"due"`
		} `json:"effect"`
	}
	if err := json.Unmarshal(bodies[0], &got); err != nil {
		t.Fatalf("%v: %s", err, bodies[0])
	}
	e := got.Effect
	if got.Event != "step_overdue" || got.Org != "o_acme" || got.URL != Link("r_1", "w_1") ||
		e.Kind != "overdue" || e.RunID != "r_1" || e.Org != "o_acme" || e.StepID != "finance_review" || e.WorkItemID != "w_1" ||
		e.AssignedTo.Group != "finance-approver" || e.Operators != "operators" || !e.Due.Equal(*no.WorkItem.Due) {
		t.Fatalf("the body %s", bodies[0])
	}
	// Without --webhook any more, a delivery planned for it gives up.
	n, _ = New(nil, nil)
	if err := n.Deliver(context.Background(), "o_acme", LegacyChannel, no); !errors.Is(err, ErrPermanent) {
		t.Fatalf("delivering to a --webhook no longer set: %v", err)
	}
}
