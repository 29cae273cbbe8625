package gateway

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

func TestLimitConcurrency(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var mu sync.Mutex
	inside, most := 0, 0
	h := LimitConcurrency(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		inside++
		most = max(most, inside)
		mu.Unlock()
		<-release
		mu.Lock()
		inside--
		mu.Unlock()
	}), &ConcurrencyOptions{MaxRequests: 2, Wait: 100 * time.Millisecond})

	var wg sync.WaitGroup
	codes := make(chan int, 2)
	for range 2 {
		wg.Go(func() {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/mcp", nil))
			codes <- w.Code
		})
	}
	for {
		mu.Lock()
		n := inside
		mu.Unlock()
		if n == 2 {
			break
		}
		time.Sleep(time.Millisecond)
	}

	// A third request waits, then is refused.
	start := time.Now()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/mcp", nil))
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" {
		t.Errorf("third request: %d, Retry-After %q; want 503 with Retry-After", w.Code, w.Header().Get("Retry-After"))
	}
	if d := time.Since(start); d < 90*time.Millisecond {
		t.Errorf("third request refused after %v, want after waiting 100ms", d)
	}

	// One whose caller gives up while waiting never runs.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/mcp", nil).WithContext(ctx))

	close(release)
	wg.Wait()
	for range 2 {
		if c := <-codes; c != http.StatusOK {
			t.Errorf("admitted request: %d", c)
		}
	}
	if most != 2 {
		t.Errorf("%d requests ran at once, want 2", most)
	}

	// Slots come back.
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/mcp", nil))
	if w.Code != http.StatusOK {
		t.Errorf("after release: %d", w.Code)
	}
}
