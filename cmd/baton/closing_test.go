package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/baton-run/baton/gateway"
)

// hiddenWriter hides the server's writer from http.ResponseController, as
// a middleware's wrapper without Unwrap does.
type hiddenWriter struct{ http.ResponseWriter }

// The gateway's server closes a refused stalled request's connection
// soon after its answer, whichever handler refused it and however it
// wrapped the writer: without closeWhenAnswered, net/http reads what is
// left of the body for the server's whole read timeout. A request whose
// answer keeps the connection is not cut.
func TestServerClosesWhenAnswered(t *testing.T) {
	t.Parallel()
	refuse := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			_, _ = io.Copy(io.Discard, r.Body)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		// A refusal that does not read the body and cannot reach the
		// connection's deadline itself.
		hw := hiddenWriter{w}
		hw.Header().Set("Connection", "close")
		http.Error(hw, "no bearer token", http.StatusUnauthorized)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := newHTTPServer(refuse)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	send := func(t *testing.T, auth string) (net.Conn, *bufio.Reader) {
		conn, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		head := "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n" + auth + "\r\n"
		if _, err := io.WriteString(conn, head+`{"jsonrpc":`); err != nil {
			t.Fatal(err)
		}
		return conn, bufio.NewReader(conn)
	}

	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		conn, rd := send(t, "")
		// Half the read timeout: far more than the second a refused body
		// gets, far less than what the read timeout would hold it.
		conn.SetReadDeadline(time.Now().Add(gateway.ReadTimeout / 2))
		resp, err := http.ReadResponse(rd, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != http.StatusUnauthorized || !resp.Close {
			t.Fatalf("%s, close %v", resp.Status, resp.Close)
		}
		if _, err := rd.ReadByte(); err != io.EOF {
			t.Fatalf("after the refusal the connection gave %v, want it closed", err)
		}
	})
	t.Run("answered and kept", func(t *testing.T) {
		t.Parallel()
		conn, rd := send(t, "Authorization: Bearer x\r\n")
		// The body stalls: the handler waits for it, and nothing comes
		// back until it is sent.
		conn.SetReadDeadline(time.Now().Add(refusedBodyWait + time.Second))
		if _, err := rd.Peek(1); err == nil {
			t.Fatal("an answer came before the body")
		}
		if _, err := io.WriteString(conn, string(make([]byte, 100000-len(`{"jsonrpc":`)))); err != nil {
			t.Fatal(err)
		}
		conn.SetReadDeadline(time.Now().Add(gateway.ReadTimeout))
		resp, err := http.ReadResponse(rd, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusNoContent || resp.Close {
			t.Fatalf("%s, close %v; want 204 keeping the connection", resp.Status, resp.Close)
		}
	})
}
