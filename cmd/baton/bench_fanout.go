package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"go.temporal.io/sdk/client"

	"github.com/baton-run/baton/internal/load"
)

// fanoutFlags are the flags of baton bench that --fanout uses.
type fanoutFlags struct {
	items, concurrency                                                   int
	url, data, agentTok, personTok, temporalAddr, namespace, compression string
}

// benchFanout is baton bench --fanout: a for_each fan-out timed against
// start_run calls of its child (load.Fanout).
func benchFanout(f fanoutFlags, stdout, stderr io.Writer) int {
	token, err := benchTokens(f.data, f.agentTok, f.personTok)
	if err != nil {
		fmt.Fprintf(stderr, "baton bench: %v\n", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	o := load.FanoutOptions{URL: f.url, Token: token, Items: f.items, Concurrency: f.concurrency, Out: stdout}
	if f.temporalAddr != "" {
		comp, err := temporalCompression(f.compression, f.temporalAddr)
		if err != nil {
			fmt.Fprintf(stderr, "baton bench: %v\n", err)
			return 2
		}
		c, err := client.Dial(client.Options{HostPort: f.temporalAddr, Namespace: f.namespace, ConnectionOptions: client.ConnectionOptions{GrpcCompression: comp}})
		if err != nil {
			fmt.Fprintf(stderr, "baton bench: Temporal at %s: %v\n", f.temporalAddr, err)
			return 1
		}
		defer c.Close()
		o.Temporal = c
	}
	if _, err := load.Fanout(ctx, o); err != nil {
		fmt.Fprintf(stderr, "baton bench: %v\n", err)
		return 1
	}
	return 0
}
