package gateway

import (
	"net/http"
	"strconv"
	"time"
)

// ConcurrencyOptions configure [LimitConcurrency].
type ConcurrencyOptions struct {
	// MaxRequests is the most requests served at once. Default 256.
	MaxRequests int
	// Wait is how long a request waits for a free slot before it is
	// refused. Default 5 seconds.
	Wait time.Duration
}

// LimitConcurrency serves at most opts.MaxRequests requests at once (nil
// options mean defaults). A request that finds every slot taken waits up
// to opts.Wait for one, then gets 503 with Retry-After: MCP clients retry,
// and a write retried with its requestId is answered once.
func LimitConcurrency(next http.Handler, opts *ConcurrencyOptions) http.Handler {
	var o ConcurrencyOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxRequests < 1 {
		o.MaxRequests = 256
	}
	if o.Wait <= 0 {
		o.Wait = 5 * time.Second
	}
	slots := make(chan struct{}, o.MaxRequests)
	retryAfter := strconv.Itoa(max(1, int(o.Wait/time.Second)))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case slots <- struct{}{}:
		default:
			t := time.NewTimer(o.Wait)
			defer t.Stop()
			select {
			case slots <- struct{}{}:
			case <-r.Context().Done():
				return
			case <-t.C:
				w.Header().Set("Retry-After", retryAfter)
				http.Error(w, "The server is busy; retry shortly.", http.StatusServiceUnavailable)
				return
			}
		}
		defer func() { <-slots }()
		next.ServeHTTP(w, r)
	})
}
