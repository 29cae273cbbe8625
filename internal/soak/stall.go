package soak

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// StallBound is how long a refused stalled request may keep its
// connection, answer included: far more than the second a gateway gives
// what is left of a refused body, far less than its one-minute read
// timeout, or the two-minute idle timeout after it.
const StallBound = 30 * time.Second

// Stall sends what a slow-loris sends to the gateway at addr: an
// unauthenticated POST /mcp that announces a body of 100000 bytes and
// stops after 11 of them. It returns the answer's status and how long the
// gateway took to close the connection after the request was sent, or an
// error when it did not answer or did not close within StallBound.
func Stall(addr string) (int, time.Duration, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return 0, 0, err
	}
	defer conn.Close()
	begin := time.Now()
	head := "POST /mcp HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n"
	if _, err := io.WriteString(conn, head+`{"jsonrpc":`); err != nil {
		return 0, 0, err
	}
	_ = conn.SetReadDeadline(begin.Add(StallBound))
	rd := bufio.NewReader(conn)
	resp, err := http.ReadResponse(rd, nil)
	if err != nil {
		return 0, time.Since(begin), fmt.Errorf("no answer within %s: %w", StallBound, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if !resp.Close {
		return resp.StatusCode, time.Since(begin), fmt.Errorf("answered %s without closing the connection", resp.Status)
	}
	// Nothing more comes: the next read ends when the server closes.
	if _, err := rd.ReadByte(); err == nil {
		return resp.StatusCode, time.Since(begin), fmt.Errorf("the gateway sent more after its answer")
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return resp.StatusCode, time.Since(begin), fmt.Errorf("the connection was still open %s after the request", StallBound)
	}
	return resp.StatusCode, time.Since(begin), nil
}
