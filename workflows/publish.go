package workflows

import (
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/baton-run/baton/interpreter"
)

var (
	keyProcess = temporal.NewSearchAttributeKeyKeyword(SearchProcess)
	keyVersion = temporal.NewSearchAttributeKeyInt64(SearchVersion)
	keyMode    = temporal.NewSearchAttributeKeyKeyword(SearchMode)
	keyState   = temporal.NewSearchAttributeKeyKeyword(SearchState)
	keyOutcome = temporal.NewSearchAttributeKeyKeyword(SearchOutcome)
	keyOrg     = temporal.NewSearchAttributeKeyKeyword(SearchOrg)
)

// publish writes the read model (when the run changed since the last
// write) and the answer of a write (when given) in one local activity,
// asks for the effects the machine wants, and refreshes what the Temporal
// UI shows. The activity is retried until it succeeds: a write answers
// only once its read-model rows and its answer are stored, so a get_work
// after it sees it and a replay after the run ends finds it.
//
// It reports false when the answer's requestId was another call's: then
// nothing was stored, and the caller discards the write.
func (r *runner) publish(ctx workflow.Context, answer *Answered) bool {
	now := workflow.Now(ctx)
	run := r.m.Run()
	var l *interpreter.Listing
	if run.Seq != r.publishedSeq || !r.everPublished || r.m.AttemptsPending() {
		var err error
		if l, err = r.m.Listing(now); err != nil {
			workflow.GetLogger(ctx).Error("listing failed", "run", r.in.RunID, "error", err)
			l = nil
		} else if l.Final != nil && r.in.OmitBody {
			// get_run adds the body to an ended run's view, as to answers.
			if l.Final, err = encodeAnswer(r.m.View(now), true); err != nil {
				workflow.GetLogger(ctx).Error("final view failed", "run", r.in.RunID, "error", err)
				l = nil
			}
		}
	}
	// The machine has moved on: the write happens even when the workflow
	// is being cancelled meanwhile.
	dctx, cancel := workflow.NewDisconnectedContext(ctx)
	defer cancel()
	lctx := workflow.WithLocalActivityOptions(dctx, publishOptions())
	var out Published
	// The same write names the channels of the run's notices.
	notices, overdue := r.takeEffects(ctx)
	if err := workflow.ExecuteLocalActivity(lctx, ActivityPublishRun, r.in.Org, l, answer, notices).Get(lctx, &out); err != nil {
		workflow.GetLogger(ctx).Error("publish run failed", "run", r.in.RunID, "error", err)
	} else if out.Reused {
		return false
	} else {
		if l != nil {
			r.publishedSeq, r.everPublished = l.Seq, true
			r.m.AttemptsWritten(l.AttemptRev)
		}
		r.deliver(ctx, out.Channels)
	}
	r.notifyOverdue(ctx, overdue)
	r.perform(ctx, r.m.TakeNeeds())
	if string(run.State) != r.state || run.Outcome != r.outcome {
		r.state, r.outcome = string(run.State), run.Outcome
		updates := []temporal.SearchAttributeUpdate{keyState.ValueSet(r.state)}
		if run.Outcome != "" {
			updates = append(updates, keyOutcome.ValueSet(run.Outcome))
		}
		if err := workflow.UpsertTypedSearchAttributes(ctx, updates...); err != nil {
			workflow.GetLogger(ctx).Error("upsert search attributes failed", "error", err)
		}
	}
	workflow.SetCurrentDetails(ctx, details(r.m, now, r.in.InboxURL))
	return true
}

// upsertOrg sets the run's BatonOrg search attribute.
func (r *runner) upsertOrg(ctx workflow.Context) {
	if err := workflow.UpsertTypedSearchAttributes(ctx, keyOrg.ValueSet(r.in.Org)); err != nil {
		workflow.GetLogger(ctx).Error("upsert the organization's search attribute failed", "error", err)
	}
}

// details is the markdown the Temporal UI shows as the run's current
// details: its state and the step table.
func details(m *interpreter.Machine, now time.Time, inboxURL string) string {
	v := m.View(now)
	var b strings.Builder
	fmt.Fprintf(&b, "**%s** v%d — run %s is **%s**", v.Run.Process, v.Run.Version, v.Run.ID, v.Run.State)
	if v.Run.Outcome != nil {
		fmt.Fprintf(&b, " (%s)", *v.Run.Outcome)
	}
	if inboxURL != "" {
		fmt.Fprintf(&b, " — [open in the inbox](%s)", InboxLink(inboxURL, v.Run.ID, ""))
	}
	b.WriteString("\n\n| step | kind | state | due |\n|---|---|---|---|\n")
	for _, s := range v.Steps {
		st := "—"
		if s.State != nil {
			st = *s.State
		}
		due := s.Due
		if s.Overdue != nil && *s.Overdue {
			due += " (overdue)"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", s.ID, s.Kind, st, due)
	}
	if inboxURL != "" && len(v.WorkItems) > 0 {
		b.WriteString("\nOpen work: ")
		for i, w := range v.WorkItems {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "[%s on %s](%s)", w.ID, w.StepID, InboxLink(inboxURL, v.Run.ID, w.ID))
		}
		b.WriteString("\n")
	}
	return b.String()
}
