package soak

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The checks a soak under chaos prints, one line each.
var soakChecks = []string{"scripts", "runs", "replays", "views", "downstream", "open work", "tokens", "records", "processes", "faults", "slow-loris"}

// `baton bench --soak 2m --chaos` holds every guarantee: it exits 0 and
// prints every check as ok, after every kind of fault was injected.
func TestChaosSoak(t *testing.T) {
	dir := t.TempDir()
	binary := filepath.Join(dir, "baton")
	build := exec.Command("go", "build", "-o", binary, "github.com/baton-run/baton/cmd/baton")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 13*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, binary, "bench", "--soak", "2m", "--chaos")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	t.Logf("baton bench --soak 2m --chaos:\n%s", stdout.String())
	if err != nil {
		t.Fatalf("the soak failed: %v\nits log:\n%s", err, stderr.String())
	}
	report := stdout.String()
	for _, name := range soakChecks {
		if !hasLine(report, "ok   "+name+" ") {
			t.Errorf("the report has no passing %q check", name)
		}
	}
	if strings.Contains(report, "FAIL") {
		t.Errorf("the soak exited 0 with a failed check")
	}
	if t.Failed() {
		os.Stderr.WriteString(stderr.String())
	}
}

func hasLine(report, prefix string) bool {
	for _, l := range strings.Split(report, "\n") {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}
