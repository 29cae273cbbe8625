package gateway

import (
	"context"
	"sync"
)

// runQueue lets a bounded number of writes to one run be in flight from
// this gateway at a time; the rest wait their turn here. Temporal admits a
// few in-flight updates per workflow (10) and has the client retry the
// others with backoff, so a pool of agents all claiming the same step
// would otherwise wait out those backoffs, some past their deadline. Here
// they queue in order and each gets its answer as soon as the run gives
// it.
type runQueue struct {
	perRun int
	mu     sync.Mutex
	runs   map[string]*runSlots
}

type runSlots struct {
	sem  chan struct{}
	refs int
}

func newRunQueue(perRun int) *runQueue {
	return &runQueue{perRun: perRun, runs: map[string]*runSlots{}}
}

// acquire waits for a slot of run runID and returns its release.
func (q *runQueue) acquire(ctx context.Context, runID string) (release func(), err error) {
	q.mu.Lock()
	s := q.runs[runID]
	if s == nil {
		s = &runSlots{sem: make(chan struct{}, q.perRun)}
		q.runs[runID] = s
	}
	s.refs++
	q.mu.Unlock()
	done := func() {
		q.mu.Lock()
		if s.refs--; s.refs == 0 {
			delete(q.runs, runID)
		}
		q.mu.Unlock()
	}
	select {
	case s.sem <- struct{}{}:
		return func() { <-s.sem; done() }, nil
	case <-ctx.Done():
		done()
		return nil, ctx.Err()
	}
}
