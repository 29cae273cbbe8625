package binary

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// binary is the baton binary TestMain builds from this repository.
var binary string

// dev is the `baton dev` every test of the package talks to.
var dev *devServer

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	flag.Parse()
	dir, err := os.MkdirTemp("", "baton-binary-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "binary:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	// baton dev runs its PostgreSQL as the postgres user when root: it
	// must reach the data folder.
	if err := os.Chmod(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "binary:", err)
		return 1
	}
	binary = filepath.Join(dir, "baton")
	build := exec.Command("go", "build", "-o", binary, "github.com/baton-run/baton/cmd/baton")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "binary: go build: %v\n%s", err, out)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dev, err = startDev(ctx, dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "binary: start baton dev:", err)
		if dev != nil {
			dev.stop()
		}
		return 1
	}
	code := m.Run()
	dev.stop()
	return code
}
