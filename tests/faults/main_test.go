package faults

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"
)

// dep is the deployment every test of the package drives, one test at a
// time: faults hit everything that runs.
var dep *deployment

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	flag.Parse()
	dir, err := reachableTempDir()
	if err != nil {
		fmt.Fprintln(os.Stderr, "faults:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	begin := time.Now()
	if binary, err = build(dir); err != nil {
		fmt.Fprintln(os.Stderr, "faults:", err)
		return 1
	}
	built := time.Since(begin)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dep, err = newDeployment(ctx, dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "faults: start the deployment:", err)
		if dep != nil {
			dep.stop()
		}
		return 1
	}
	if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "faults: binary built in %s, deployment up in %s\n",
			built.Round(time.Millisecond), (time.Since(begin) - built).Round(time.Millisecond))
	}
	code := m.Run()
	dep.stop()
	return code
}
