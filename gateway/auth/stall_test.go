package auth

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A caller without a token that announces a body and stalls gets its 401
// at once, and the connection is closed: the server does not wait for a
// body it will never use. A caller with a token keeps its connection and
// its body is read by the handler as before.
func TestRefusalDoesNotWaitForTheBody(t *testing.T) {
	t.Parallel()
	d := newTestDevIssuer(t)
	good, err := d.Issue(Identity{ID: "a_bot", Kind: KindAgent}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(Middleware(d.Verify, testMetadataURL, nil, nil)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Write(b)
	})))
	t.Cleanup(srv.Close)

	send := func(t *testing.T, token string) (net.Conn, *bufio.Reader) {
		t.Helper()
		conn, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		head := "POST /mcp HTTP/1.1\r\nHost: " + srv.Listener.Addr().String() + "\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n"
		if token != "" {
			head += "Authorization: Bearer " + token + "\r\n"
		}
		if _, err := io.WriteString(conn, head+"\r\n"+`{"jsonrpc":"2.0",`); err != nil {
			t.Fatal(err)
		}
		return conn, bufio.NewReader(conn)
	}

	t.Run("no token", func(t *testing.T) {
		t.Parallel()
		conn, rd := send(t, "")
		start := time.Now()
		conn.SetReadDeadline(start.Add(5 * time.Second))
		resp, err := http.ReadResponse(rd, nil)
		if err != nil {
			t.Fatalf("no answer within 5 s to a stalled body without a token: %v", err)
		}
		if resp.StatusCode != http.StatusUnauthorized || !resp.Close {
			t.Fatalf("status %d, Connection %q; want 401 and close", resp.StatusCode, resp.Header.Get("Connection"))
		}
		io.Copy(io.Discard, resp.Body)
		if _, err := rd.ReadByte(); err != io.EOF {
			t.Fatalf("after the 401 the connection gave %v; want it closed", err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Fatalf("401 and close took %v", d)
		}
	})

	t.Run("with a token", func(t *testing.T) {
		t.Parallel()
		conn, rd := send(t, good)
		// The handler waits for the body: nothing comes back while it stalls.
		conn.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		if _, err := rd.Peek(1); err == nil {
			t.Fatal("an authenticated request was answered before its body arrived")
		}
		rest := strings.Repeat(" ", 100000-len(`{"jsonrpc":"2.0",`))
		if _, err := io.WriteString(conn, rest); err != nil {
			t.Fatal(err)
		}
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(rd, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || len(b) != 100000 || resp.Close {
			t.Fatalf("status %d, %d bytes, close %v; want 200 echoing 100000 bytes on a kept connection", resp.StatusCode, len(b), resp.Close)
		}
	})
}
