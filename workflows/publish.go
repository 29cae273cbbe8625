package workflows

import (
	"fmt"
	"reflect"
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
			r.written, r.writtenAt = l, now
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

// changeUnlistedWrites versions the changes a run leaves unwritten:
// version 1 does not write a change that arrived by signal when it alters
// nothing the read model holds but the run's seq and updatedAt, and the
// run last wrote less than unlistedLag ago (unwritten). A child's end
// while its step still waits on others is such a change: the parent's
// listing names no work for a process step, and get_run of a running run
// reads its workflow, not the read model. The read model's updatedAt is
// then less than unlistedLag behind the run's, also when the run continues
// as new or waits for long after it. Runs recorded before write every
// change, and a run asks for the version the first time it could leave
// one unwritten.
//
// A thousand children that end a few at a time made a write, a local
// activity and its marker event in the parent's history for each few,
// each in a workflow task of the parent that waited for it.
const changeUnlistedWrites = "unlisted-writes"

// unlistedLag is how long a run may leave a change unwritten since its
// last write, under changeUnlistedWrites.
const unlistedLag = time.Second

// unwritten reports whether the run leaves its latest change unwritten:
// since version 1 of changeUnlistedWrites, a change that leaves the run
// going, lists the same work as the last write, changes no step attempt
// and asks for no effect, within unlistedLag of the last write.
func (r *runner) unwritten(ctx workflow.Context) bool {
	now := workflow.Now(ctx)
	if r.written == nil || now.Sub(r.writtenAt) >= unlistedLag || r.m.Run().State.Over() ||
		r.m.AttemptsPending() || r.m.EffectsPending() || len(r.notify.queued) > 0 {
		return false
	}
	l, err := r.m.Listing(now)
	if err != nil || !sameListing(l, r.written) {
		return false
	}
	if !r.unlisted.asked {
		r.unlisted.asked = true
		r.unlisted.on = workflow.GetVersion(ctx, changeUnlistedWrites, workflow.DefaultVersion, 1) == 1
	}
	return r.unlisted.on
}

// sameListing reports whether two listings of one run hold the same, but
// for their seq and updatedAt. A run's inputs, mode, starter and parent
// never change.
func sameListing(a, b *interpreter.Listing) bool {
	return a.State == b.State && a.Outcome == b.Outcome && a.Final == nil && b.Final == nil &&
		len(a.Attempts) == 0 && len(b.Attempts) == 0 && reflect.DeepEqual(a.Work, b.Work)
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
