package drive_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/interpreter"
)

const reviewSrc = `---
name: review
description: Draft a note and have it approved.
inputs:
  topic: string
steps:
  - id: draft
    agent: Draft the note.
    output: { text: string }
    evidence: [file]
  - id: approve
    person: editors
    approve: Approve the note.
    on_reject: draft
    next: done
  - id: done
    finish: published
---
`

func review(t testing.TB) drive.Processes {
	t.Helper()
	o := interpreter.DefaultOffer()
	p, err := interpreter.Parse([]byte(reviewSrc), &interpreter.ParseOptions{Offer: &o})
	if err != nil {
		t.Fatal(err)
	}
	return drive.Processes{p.Name: p}
}

// A walk on the machine: an agent drafts, an editor rejects once, the
// agent drafts again, the editor approves.
func ExampleWalk() {
	o := interpreter.DefaultOffer()
	p, err := interpreter.Parse([]byte(reviewSrc), &interpreter.ParseOptions{Offer: &o})
	if err != nil {
		fmt.Println(err)
		return
	}
	d := drive.NewMachine(drive.Processes{p.Name: p}, nil)
	w := drive.Walk{Process: p, RejectOnce: true}
	end, err := w.Run(context.Background(), d)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(end.Run.State, *end.Run.Outcome, w.Rejected())
	// Output: ended published [approve]
}

func TestMachineRefusesAsTheToolsDo(t *testing.T) {
	ctx := context.Background()
	d := drive.NewMachine(review(t), nil)
	var e *interpreter.Error
	if _, err := d.Start(ctx, drive.WalkStarter, "nothing", nil, ""); !errors.As(err, &e) || e.Code != interpreter.CodeNotFound {
		t.Fatalf("start of an unknown process: %v", err)
	}
	v, err := d.Start(ctx, drive.WalkStarter, "review", map[string]any{"topic": "leases"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Submit(ctx, drive.WalkAgent, "not a token", drive.Work{}); !errors.As(err, &e) || e.Code != interpreter.CodeInvalid {
		t.Fatalf("submit with a malformed token: %v", err)
	}
	c, err := d.Claim(ctx, drive.WalkAgent, v.Run.ID, "draft")
	if err != nil {
		t.Fatal(err)
	}
	// A file the driver was never given is not found.
	summary := "Drafted."
	work := drive.Work{Output: map[string]any{"text": "A note."}, Summary: &summary, Evidence: []interpreter.Evidence{{Kind: "file", Ref: "f_9"}}}
	if _, err := d.Submit(ctx, drive.WalkAgent, c.Token, work); !errors.As(err, &e) || e.Code != interpreter.CodeNotAccepted {
		t.Fatalf("submit with a file never uploaded: %v", err)
	}
	id, err := d.Upload(ctx, drive.WalkAgent, "note.txt", []byte("A note."))
	if err != nil {
		t.Fatal(err)
	}
	work.Evidence[0].Ref = id
	if _, err := d.Submit(ctx, drive.WalkOther, c.Token, work); !errors.As(err, &e) || e.Code != interpreter.CodeForbidden {
		t.Fatalf("submit with another agent's token: %v", err)
	}
	v, err = d.Submit(ctx, drive.WalkAgent, c.Token, work)
	if err != nil {
		t.Fatal(err)
	}
	if got := v.Data.Steps["draft"].Evidence; len(got) != 1 || got[0].SHA256 == "" {
		t.Fatalf("file evidence recorded as %+v, want its hash", got)
	}
}

// Time moves only when the caller moves it, and deadlines fire on the way
// at their own time: a lease runs out at its expiry, not at the time
// moved to.
func TestMachineClock(t *testing.T) {
	ctx := context.Background()
	d := drive.NewMachine(review(t), &drive.MachineOptions{Lease: time.Minute})
	v, err := d.Start(ctx, drive.WalkStarter, "review", map[string]any{"topic": "leases"}, "")
	if err != nil {
		t.Fatal(err)
	}
	c, err := d.Claim(ctx, drive.WalkAgent, v.Run.ID, "draft")
	if err != nil {
		t.Fatal(err)
	}
	expires, err := time.Parse(time.RFC3339, c.ExpiresAt)
	if err != nil {
		t.Fatal(err)
	}
	if next, ok := d.Next(); !ok || !next.Equal(expires) {
		t.Fatalf("next deadline %s %v, want the lease's expiry %s", next, ok, expires)
	}
	later := expires.Add(time.Hour)
	if err := d.Advance(ctx, later); err != nil {
		t.Fatal(err)
	}
	if !d.Now().Equal(later) {
		t.Fatalf("now %s, want %s", d.Now(), later)
	}
	if v, err = d.GetRun(ctx, drive.WalkAgent, v.Run.ID); err != nil {
		t.Fatal(err)
	}
	if st := v.Steps[0].State; st == nil || *st != "ready" {
		t.Fatalf("draft is %v after its lease ran out, want ready", st)
	}
	if v.Run.UpdatedAt != expires.UTC().Format("2006-01-02T15:04:05.000Z") {
		t.Fatalf("run updated at %s, want the lease's expiry %s", v.Run.UpdatedAt, c.ExpiresAt)
	}
	if _, ok := d.Next(); ok {
		t.Fatal("a deadline is left after the lease ran out")
	}
}

const checkedSrc = `---
name: checked
description: Draft a reply that a model checks.
steps:
  - id: draft
    agent: Draft the reply.
    output: { text: string }
    check: The reply is polite.
  - id: done
    finish: sent
---
`

// evaluator answers a checked submission's one yes/no question with the
// next of its probabilities, or an error where one is NaN.
type evaluator struct {
	calls int
	ps    []float64
}

func (e *evaluator) Evaluate(_ context.Context, r *interpreter.CheckRequest) (*interpreter.CheckAnswers, error) {
	p := e.ps[min(e.calls, len(e.ps)-1)]
	e.calls++
	if p != p {
		return nil, errors.New("the model is down")
	}
	return &interpreter.CheckAnswers{Model: "test-model", Answers: []interpreter.CheckAnswer{{ID: r.Questions[0].ID, Probability: &p}}}, nil
}

// A submission to a checked step is answered after the evaluator, as the
// workflow answers it: retry when there is none or it fails twice (it is
// asked once more after a failure), not_accepted with the check's lines
// when it fails the submission, and the step done with the verdict
// recorded when it passes.
func TestMachineChecksSubmissions(t *testing.T) {
	ctx := context.Background()
	o := interpreter.DefaultOffer()
	o.Profiles = []string{interpreter.ProfileCheck}
	p, err := interpreter.Parse([]byte(checkedSrc), &interpreter.ParseOptions{Offer: &o})
	if err != nil {
		t.Fatal(err)
	}
	summary := "Drafted."
	work := drive.Work{Output: map[string]any{"text": "Dear customer"}, Summary: &summary}
	down := math.NaN()
	for _, tc := range []struct {
		name  string
		ev    *evaluator
		code  interpreter.Code
		issue string
		calls int
	}{
		{"no evaluator", nil, interpreter.CodeRetry, "", 0},
		{"down", &evaluator{ps: []float64{down}}, interpreter.CodeRetry, "", 2},
		{"fails", &evaluator{ps: []float64{0.12}}, interpreter.CodeNotAccepted, "check: The reply is polite. → no (0.12)", 1},
		{"down once", &evaluator{ps: []float64{down, 0.95}}, "", "", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := &drive.MachineOptions{}
			if tc.ev != nil {
				opts.Evaluator = tc.ev
			}
			d := drive.NewMachine(drive.Processes{p.Name: p}, opts)
			v, err := d.Start(ctx, drive.WalkStarter, "checked", map[string]any{}, "")
			if err != nil {
				t.Fatal(err)
			}
			runID := v.Run.ID
			c, err := d.Claim(ctx, drive.WalkAgent, runID, "draft")
			if err != nil {
				t.Fatal(err)
			}
			v, err = d.Submit(ctx, drive.WalkAgent, c.Token, work)
			if tc.ev != nil && tc.ev.calls != tc.calls {
				t.Fatalf("the evaluator was asked %d times, want %d", tc.ev.calls, tc.calls)
			}
			if tc.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				var got interpreter.CheckVerdict
				if d := v.Data.Steps["draft"]; d == nil || json.Unmarshal(d.Check, &got) != nil || got.Verdict != interpreter.VerdictPass || got.Model != "test-model" {
					t.Fatalf("the passed check recorded %+v", v.Data.Steps["draft"])
				}
				if v.Run.State != "ended" {
					t.Fatalf("the run is %s after its one step passed its check", v.Run.State)
				}
				return
			}
			var e *interpreter.Error
			if !errors.As(err, &e) || e.Code != tc.code || (tc.issue != "" && (len(e.Issues) != 1 || e.Issues[0] != tc.issue)) {
				t.Fatalf("submit: %v (%+v), want %s %q", err, e, tc.code, tc.issue)
			}
			if v, err = d.GetRun(ctx, drive.WalkAgent, runID); err != nil {
				t.Fatal(err)
			}
			if st := v.Steps[0].State; st == nil || *st != "claimed" || v.Data.Steps["draft"] != nil {
				t.Fatalf("after a refused check draft is %v with data %+v, want claimed with none", st, v.Data.Steps["draft"])
			}
		})
	}
}
