package gateway

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestRunQueueBoundsWritesPerRun(t *testing.T) {
	q := newRunQueue(3)
	var inFlight, most atomic.Int64
	var wg sync.WaitGroup
	for range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			release, err := q.acquire(context.Background(), "r_1")
			if err != nil {
				t.Error(err)
				return
			}
			n := inFlight.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			time.Sleep(time.Millisecond)
			inFlight.Add(-1)
			release()
		}()
	}
	// Another run is not held up by the first.
	release, err := q.acquire(context.Background(), "r_2")
	if err != nil {
		t.Fatal(err)
	}
	release()
	wg.Wait()
	if m := most.Load(); m > 3 || m < 1 {
		t.Fatalf("%d writes to one run were in flight at once, want at most 3", m)
	}
	if len(q.runs) != 0 {
		t.Fatalf("%d runs still tracked after every write finished", len(q.runs))
	}
}

func TestRunQueueGivesUpWithTheCaller(t *testing.T) {
	q := newRunQueue(1)
	release, err := q.acquire(context.Background(), "r_1")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := q.acquire(ctx, "r_1"); err == nil {
		t.Fatal("a write waiting past its caller's deadline got a slot")
	}
	release()
	if len(q.runs) != 0 {
		t.Fatalf("%d runs still tracked", len(q.runs))
	}
}
