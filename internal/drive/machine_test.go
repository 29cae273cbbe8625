package drive_test

import (
	"context"
	"errors"
	"fmt"
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
