package workflows

import (
	"errors"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/baton-run/baton/interpreter"
)

// A channel that keeps failing holds up nothing: the run answers its
// writes and ends on time while the deliveries retry, each is tried
// NotifyAttempts times (a permanent failure once), and the workflow
// closes once they have given up.
func TestFailingChannelHoldsUpNothing(t *testing.T) {
	for _, tc := range []struct {
		name  string
		err   error
		tries int
	}{
		{"retried until it gives up", errors.New("webhook webhook-1: POST https://hooks.acme.example/b answered 503"), NotifyAttempts},
		{"permanent", temporal.NewNonRetryableApplicationError("organization o_test has no channel webhook-1 now", NotifyPermanent, nil), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t)
			b.rec.deliver = func(*interpreter.Notice) error { return tc.err }
			start := b.env.Now()
			// The agent step is overdue at 1h; its delivery is still
			// being retried when the run is cancelled.
			cancelAt := time.Hour + 5*time.Minute
			var answered time.Duration
			b.at(cancelAt, UpdateCancel, "c", Write{Command: interpreter.Cancel{Actor: operator, Reason: "done"}}, func(r Result, err error) {
				if err != nil {
					t.Errorf("cancel: %v", err)
				}
				answered = b.env.Now().Sub(start)
			})
			b.env.ExecuteWorkflow(ProcessRun, input(t, supplierSrc))
			var ce *temporal.CanceledError
			if err := b.env.GetWorkflowError(); !errors.As(err, &ce) {
				t.Fatalf("workflow error %v, want Canceled", err)
			}
			if answered != cancelAt {
				t.Fatalf("the cancel was answered at %s, asked at %s", answered, cancelAt)
			}
			if l := b.rec.last(); l.State != "cancelled" {
				t.Fatalf("last listing %s", l.State)
			}
			if len(b.rec.tries) != 2 {
				t.Fatalf("deliveries tried %v, want work.overdue and run.ended", b.rec.tries)
			}
			for id, n := range b.rec.tries {
				if n != tc.tries {
					t.Errorf("notice %s tried %d times, want %d", id, n, tc.tries)
				}
			}
			if len(b.rec.notices) != 0 {
				t.Errorf("delivered %v", b.rec.notices)
			}
			// The workflow outlives the run only while run.ended is tried:
			// with the backoff of deliverOptions, about half an hour.
			closed := b.env.Now().Sub(start)
			if tc.tries == 1 && closed > cancelAt+time.Minute {
				t.Errorf("closed at %s after a permanent failure at %s", closed, cancelAt)
			}
			if tc.tries > 1 && (closed < cancelAt+20*time.Minute || closed > cancelAt+time.Hour) {
				t.Errorf("closed at %s, cancelled at %s", closed, cancelAt)
			}
		})
	}
}
