package workflows_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"

	"github.com/baton-run/baton/interpreter"
	"github.com/baton-run/baton/workflows"
)

// fanThenAgentSrc runs ends-at-once once per item of its list, then waits
// for an agent: the run goes on after the join.
const fanThenAgentSrc = `---
name: fan-then-agent
description: Runs ends-at-once once per item, then waits for an agent.
inputs:
  items: { type: list, items: string }
steps:
  - id: each
    process: ends-at-once
    for_each: inputs.items
    inputs: { item: item }
  - id: after
    agent: Nothing to do.
  - id: done
    finish: done
---
Run ends-at-once once per item, then wait.
`

// A parent whose children end a few at a time leaves the ends that change
// nothing its listing holds unwritten within a second of its last write
// (unlisted-writes): while the step waits, its read-model writes are at
// most one a second, not one for each workflow task that brings an end.
// The join, which lists new work, is written at once, and the read model
// then shows the run exactly as its workflow does.
func TestChildEndsLeftUnwrittenWithinASecond(t *testing.T) {
	h := setup(t)
	f := publishFamilyOf(t, h, workflows.EndsAtOnceSrc, fanThenAgentSrc)
	n := 6 * workflows.StartWindow
	items := make([]any, n)
	for i := range items {
		items[i] = fmt.Sprintf("item-%d", i)
	}
	parent := f.startWith(t, interpreter.ModeLive, interpreter.Values{"items": items})
	v := h.until(t, parent, "the step after the join ready", func(v *interpreter.View) bool {
		s := stepView(v, "after")
		return s.State != nil && *s.State == "ready"
	})
	joined, _ := v.Data.Steps["each"].Output["items"].([]any)
	if len(joined) != n {
		t.Fatalf("joined %d items, want %d", len(joined), n)
	}
	// The join's write lists the agent step and carries the run's
	// latest change: nothing happened to the run since.
	var seq int64
	h.checkReadModel(t, parent, v, false, &seq)
	row, err := h.store.GetRun(ctxFor(t), org, parent)
	if err != nil {
		t.Fatal(err)
	}
	if got := interpreter.FormatTime(row.UpdatedAt); got != v.Run.UpdatedAt {
		t.Fatalf("the read model's updatedAt is %s, the run's %s", got, v.Run.UpdatedAt)
	}

	hist := h.history(t, parent, "")
	if !hasVersionMarker(t, hist, "unlisted-writes") {
		t.Fatal("the parent recorded no version of unlisted-writes")
	}
	var first, last time.Time
	for _, ev := range hist.Events {
		if ev.GetChildWorkflowExecutionCompletedEventAttributes() != nil {
			if first.IsZero() {
				first = ev.GetEventTime().AsTime()
			}
			last = ev.GetEventTime().AsTime()
		}
	}
	// The writes recorded after the first end and before the last: each
	// is a second or more after the one before, in the run's time (the
	// start of its workflow task), which the marker's time follows by the
	// task's own few milliseconds.
	writes := 0
	for _, ev := range hist.Events {
		at := ev.GetEventTime().AsTime()
		if at.After(first) && at.Before(last) && isPublishMarker(ev.GetMarkerRecordedEventAttributes().GetDetails()) {
			writes++
		}
	}
	t.Logf("%d read-model writes while %d children ended over %s", writes, n, last.Sub(first))
	if most := 2 + int(last.Sub(first)/time.Second); writes > most {
		t.Fatalf("%d read-model writes while %d children ended over %s, want at most %d", writes, n, last.Sub(first), most)
	}
	h.save(t, parent, "fanout-unlisted")
}

// isPublishMarker reports whether a marker's details are those of a
// PublishRun local activity.
func isPublishMarker(details map[string]*commonpb.Payloads) bool {
	for _, p := range details["data"].GetPayloads() {
		if strings.Contains(string(p.GetData()), `"`+workflows.ActivityPublishRun+`"`) {
			return true
		}
	}
	return false
}
