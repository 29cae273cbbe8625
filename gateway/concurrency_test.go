package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/internal/testing/spectest"
	"github.com/baton-run/baton/interpreter"
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
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" || w.Header().Get("Connection") != "close" {
		t.Errorf("third request: %d, Retry-After %q, Connection %q; want 503 with Retry-After, closing", w.Code, w.Header().Get("Retry-After"), w.Header().Get("Connection"))
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

// One identity with MaxRequestsPerIdentity requests in flight (slow
// uploads, say) gets retry at once for the next, without its body being
// read, while another identity is served.
func TestLimitPerIdentity(t *testing.T) {
	t.Parallel()
	b := setup(t, &Options{MaxRequestsPerIdentity: 2})
	srv := httptest.NewServer(b.g.Handler())
	t.Cleanup(srv.Close) // after the stalled connections close
	greedy := auth.Identity{ID: "a_greedy", Kind: auth.KindAgent}
	// Two uploads whose bodies stall after their first bytes.
	stalled := func() net.Conn {
		conn, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 2000000\r\n\r\n%s",
			srv.Listener.Addr(), b.token(t, greedy), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"upload","arguments":{"contentBase64":"AAAA`)
		return conn
	}
	stalled()
	stalled()
	// Both uploads hold their slots before the third request: one sent
	// while the second upload was still arriving would take its slot,
	// and the upload would be the one refused.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		b.g.perIdentity.mu.Lock()
		held := b.g.perIdentity.n[string(greedy.Kind)+"\x00"+greedy.ID]
		b.g.perIdentity.mu.Unlock()
		if held == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stalled uploads hold %d slots, want 2", held)
		}
	}
	describe := func(id auth.Identity) (*http.Response, string) {
		resp, err := b.post(t, srv.URL, id, strings.NewReader(toolCall(`{"name":"describe","arguments":{}}`)))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, string(body)
	}
	resp, body := describe(greedy)
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a third request of the same identity got %d, want 429 while two are in flight", resp.StatusCode)
	}
	var e interpreter.Error
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Code != interpreter.CodeRetry || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("third request: %s, Retry-After %q; want the tool error retry", body, resp.Header.Get("Retry-After"))
	}
	if err := spectest.ValidateErr("tool-error.json", json.RawMessage(body)); err != nil {
		t.Fatalf("refusal does not match tool-error: %v", err)
	}
	if resp, body := describe(auth.Identity{ID: "a_other", Kind: auth.KindAgent}); resp.StatusCode != http.StatusOK || !strings.Contains(body, `"result"`) {
		t.Fatalf("another identity: %d %.200s; want served", resp.StatusCode, body)
	}
}
