package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/baton-run/baton/internal/soak"
)

// runSoak runs `baton bench --soak D`: the deployment is this binary.
func runSoak(d time.Duration, chaos bool, clients int, seed uint64, stdout, stderr io.Writer) int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "baton bench: find this binary: %v\n", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := soak.Run(ctx, soak.Options{Binary: self, Duration: d, Chaos: chaos, Clients: clients, Seed: seed, Out: stdout, Log: stderr})
	if err != nil {
		fmt.Fprintf(stderr, "baton bench --soak: %v\n", err)
		return 1
	}
	if !rep.OK() {
		return 1
	}
	return 0
}
