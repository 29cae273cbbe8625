package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/interpreter"
)

// DefaultMaxRequests is how many requests LimitConcurrency serves at once
// unless told otherwise.
const DefaultMaxRequests = 256

// ConcurrencyOptions configure [LimitConcurrency].
type ConcurrencyOptions struct {
	// MaxRequests is the most requests served at once. Default
	// DefaultMaxRequests.
	MaxRequests int
	// Wait is how long a request waits for a free slot before it is
	// refused. Default 5 seconds.
	Wait time.Duration
}

// LimitConcurrency serves at most opts.MaxRequests requests at once (nil
// options mean defaults). A request that finds every slot taken waits up
// to opts.Wait for one, then gets 503 with Retry-After, and its connection
// is closed without waiting for its body: MCP clients retry, and a write
// retried with its requestId is answered once.
func LimitConcurrency(next http.Handler, opts *ConcurrencyOptions) http.Handler {
	var o ConcurrencyOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxRequests < 1 {
		o.MaxRequests = DefaultMaxRequests
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
				// The answer closes the connection: net/http would first
				// read what is left of the body, for a caller that stalls
				// it up to the server's read timeout.
				w.Header().Set("Connection", "close")
				w.Header().Set("Retry-After", retryAfter)
				http.Error(w, "The server is busy; retry shortly.", http.StatusServiceUnavailable)
				_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(time.Second))
				return
			}
		}
		defer func() { <-slots }()
		next.ServeHTTP(w, r)
	})
}

// DefaultRequestsPerIdentity is how many requests one identity has served
// at once unless Options.MaxRequestsPerIdentity says otherwise.
const DefaultRequestsPerIdentity = 64

// identitySlots counts the requests each identity has in flight, so that
// one caller (a slow upload or many) cannot take every slot of
// LimitConcurrency from the others.
type identitySlots struct {
	max int
	mu  sync.Mutex
	n   map[string]int
}

func newIdentitySlots(n int) *identitySlots {
	return &identitySlots{max: n, n: map[string]int{}}
}

// Admit takes one of the identity's request slots. It reports false, and
// takes nothing, when the identity already has
// Options.MaxRequestsPerIdentity requests in flight; otherwise release
// gives the slot back and must be called once the request is answered.
// The web inbox admits each of its requests here too.
func (g *Gateway) Admit(id auth.Identity) (release func(), ok bool) {
	s := g.perIdentity
	key := string(id.Kind) + "\x00" + id.ID
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n[key] >= s.max {
		return nil, false
	}
	s.n[key]++
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.n[key]--; s.n[key] == 0 {
				delete(s.n, key)
			}
		})
	}, true
}

// limitPerIdentity serves a request of an identity that has a slot free
// (Admit). Beyond that it answers at once, without reading the body: 429
// with Retry-After and the tool error retry as JSON, and the connection
// is closed.
func (g *Gateway) limitPerIdentity(next http.Handler) http.Handler {
	body, _ := json.Marshal(interpreter.Refuse(interpreter.CodeRetry,
		fmt.Sprintf("This caller already has %d requests in progress, the most one caller may have; retry with the same requestId once one is answered.", g.opts.MaxRequestsPerIdentity)))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := auth.FromTokenInfo(sdkauth.TokenInfoFromContext(r.Context()))
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		release, ok := g.Admit(*id)
		if !ok {
			h := w.Header()
			h.Set("Connection", "close")
			h.Set("Retry-After", "1")
			h.Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write(body)
			// What is left of the body gets a second, not the read timeout.
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(time.Second))
			return
		}
		defer release()
		next.ServeHTTP(w, r)
	})
}
