package upgrade

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/baton-run/baton/internal/testing/pgtest"
)

// binary is today's baton, built by TestMain.
var binary string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "baton-upgrade-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "upgrade:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "baton")
	build := exec.Command("go", "build", "-o", binary, "github.com/baton-run/baton/cmd/baton")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "upgrade: go build: %v\n%s", err, out)
		return 1
	}
	code := m.Run()
	pgtest.StopShared()
	return code
}
