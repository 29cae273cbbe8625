package main

import (
	"strings"
	"testing"
)

// baton bench refuses a --client it does not know, before it reads or
// calls anything.
func TestBenchClientFlag(t *testing.T) {
	var stdout, stderr strings.Builder
	if code := runBench([]string{"--client", "fast", "--process-file", "/nonexistent"}, &stdout, &stderr); code != 2 {
		t.Fatalf("exit %d, want 2; stderr: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), `--client "fast": want plain or sdk`) {
		t.Errorf("stderr %q does not name the flag and its values", stderr.String())
	}
}

// --chaos without --soak is refused before anything starts.
func TestBenchChaosNeedsSoak(t *testing.T) {
	var stdout, stderr strings.Builder
	if code := runBench([]string{"--chaos", "--process-file", "/nonexistent"}, &stdout, &stderr); code != 2 {
		t.Fatalf("exit %d, want 2; stderr: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "--chaos needs --soak") {
		t.Errorf("stderr %q does not say --chaos needs --soak", stderr.String())
	}
}
