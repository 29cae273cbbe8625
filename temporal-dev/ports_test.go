package temporaldev

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
)

// A port picked free and taken before the server binds it (by another
// server, or as the local port of some outgoing connection) makes Start
// try other ports instead of failing.
func TestStartTriesOtherPortsWhenOneIsTaken(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	busy := taken.Addr().(*net.TCPAddr).Port
	var picks atomic.Int32
	pickPorts = func(ip string, n int) ([]int, error) {
		ports, err := freePorts(ip, n)
		if err == nil && n == 3 && picks.Add(1) == 1 {
			ports[2] = busy // the worker service's
		}
		return ports, err
	}
	defer func() { pickPorts = freePorts }()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := Start(ctx, nil)
	if err != nil {
		t.Fatalf("Start with a taken port: %v", err)
	}
	defer s.Stop()
	if picks.Load() < 2 {
		t.Fatalf("Start picked internal ports %d times, want a second pick after the taken one", picks.Load())
	}
	c, err := s.NewClient(ctx, client.Options{})
	if err != nil {
		t.Fatalf("the server started on other ports does not answer: %v", err)
	}
	c.Close()
}
