package main

import (
	"strings"
	"testing"
)

// baton dev hands out 30-day tokens in the clear; listening beyond loopback
// must not go unnoticed.
func TestDevWarnsWhenListeningBeyondLoopback(t *testing.T) {
	t.Parallel()
	for _, listen := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.0.2.7:0"} {
		code, _, stderr := runBaton("dev", "--listen", listen, "--data", t.TempDir(), "--database-url", unreachable[1])
		if code != 1 {
			t.Errorf("%s: exit %d, want 1 (the database is unreachable)", listen, code)
		}
		if !strings.Contains(stderr, "level=WARN") || !strings.Contains(stderr, "BEYOND THIS MACHINE") {
			t.Errorf("%s: no loud warning in %q", listen, stderr)
		}
	}
	for _, listen := range []string{"127.0.0.1:0", "localhost:0", "[::1]:0"} {
		_, _, stderr := runBaton("dev", "--listen", listen, "--data", t.TempDir(), "--database-url", unreachable[1])
		if strings.Contains(stderr, "BEYOND THIS MACHINE") {
			t.Errorf("%s: warned about a loopback address: %q", listen, stderr)
		}
	}
}
