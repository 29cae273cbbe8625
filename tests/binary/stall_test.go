package binary

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-run/baton/internal/soak"
)

// An unauthenticated caller that announces a body and stalls gets its 401
// with Connection: close, and the connection is closed soon after (within
// soak.StallBound), every time: 96 stalled requests in three waves of 32 at once, while clients
// of both organizations walk runs through the same server.
func TestRefusalClosesAStalledConnection(t *testing.T) {
	defer dev.checkHealthy(t)
	addr := strings.TrimPrefix(dev.base, "http://")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// The load: eight clients walking intake runs to their end until the
	// stalled requests are done.
	var walked, failed atomic.Int64
	var firstErr atomic.Value
	var load sync.WaitGroup
	for i := range 8 {
		load.Add(1)
		go func() {
			defer load.Done()
			org := orgA
			if i%2 == 1 {
				org = orgB
			}
			drv := dev.driver(t, org)
			for n := 0; ctx.Err() == nil; n++ {
				if _, err := walkIntake(ctx, drv, fmt.Sprintf("%s-load-%d-%d", org, i, n), true); err != nil {
					if ctx.Err() == nil {
						failed.Add(1)
						firstErr.CompareAndSwap(nil, err)
					}
					continue
				}
				walked.Add(1)
			}
		}()
	}
	// Let the load reach the server before the first wave.
	for walked.Load() == 0 && failed.Load() == 0 {
		time.Sleep(50 * time.Millisecond)
	}

	var slowest atomic.Int64
	for wave := range 3 {
		var wg sync.WaitGroup
		for i := range 32 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				status, took, err := soak.Stall(addr)
				if err != nil {
					t.Errorf("wave %d, request %d: %v", wave, i, err)
					return
				}
				if status != http.StatusUnauthorized {
					t.Errorf("wave %d, request %d: %d, want 401", wave, i, status)
				}
				for d := int64(took); ; {
					s := slowest.Load()
					if d <= s || slowest.CompareAndSwap(s, d) {
						break
					}
				}
			}()
		}
		wg.Wait()
	}
	cancel()
	load.Wait()
	if walked.Load() == 0 {
		t.Errorf("no run was walked beside the stalled requests: the load never ran")
	}
	if err, _ := firstErr.Load().(error); err != nil {
		t.Errorf("%d walks failed beside the stalled requests; the first: %v", failed.Load(), err)
	}
	t.Logf("96 stalled requests refused and closed, the slowest in %s, while %d runs were walked", time.Duration(slowest.Load()).Round(time.Millisecond), walked.Load())
}

// remarshal decodes a value through JSON into out.
func remarshal(v any, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}
