package main

import (
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Two `baton dev` started at once with no flag but the command, each in a
// folder of its own, both serve: a default port one of them (or another
// process) holds, the other replaces by a free one and says so. A third in
// the first's folder stops at once, naming the process that has the data
// folder, and the first goes on.
func TestDevTwoWithoutPortFlags(t *testing.T) {
	t.Parallel()
	bin := batonBinary(t)
	dirA, dirB := openDir(t), openDir(t)
	// Started at once: they claim the defaults in turn.
	a := launchBinaryDev(t, bin, dirA, "dev")
	b := launchBinaryDev(t, bin, dirB, "dev")
	a.await(t)
	b.await(t)

	for name, d := range map[string]*binDev{"first": a, "second": b} {
		if res := callTool(t, d.mcpURL, d.agentToken, "describe", map[string]any{}); res["ok"] != true {
			t.Errorf("the %s baton dev: describe answered %v", name, res)
		}
	}
	if a.mcpURL == b.mcpURL || a.frontend == b.frontend || a.uiURL == b.uiURL {
		t.Fatalf("both serve on one address: MCP %s and %s, Temporal %s and %s, UI %s and %s",
			a.mcpURL, b.mcpURL, a.frontend, b.frontend, a.uiURL, b.uiURL)
	}
	// Each says where it went instead of a default it did not get.
	for _, c := range []struct{ port, what, flag string }{
		{"8080", "the gateway listens on", "--listen"},
		{"7233", "Temporal's frontend is on", "--temporal-port"},
		{"8233", "the Temporal UI is on", "--ui-port"},
	} {
		for name, d := range map[string]*binDev{"first": a, "second": b} {
			addr := map[string]string{"8080": hostPort(t, d.mcpURL), "7233": d.frontend, "8233": hostPort(t, d.uiURL)}[c.port]
			_, port, _ := net.SplitHostPort(addr)
			note := "Port " + c.port + " is taken: " + c.what + " " + addr + " instead (" + c.flag + " chooses)"
			if got := strings.Contains(d.printed, note); got != (port != c.port) {
				t.Errorf("the %s baton dev is on %s; printed the note %q: %v, want %v:\n%s", name, addr, note, got, port != c.port, d.printed)
			}
		}
	}
	t.Logf("first on %s, %s, %s; second on %s, %s, %s", a.mcpURL, a.frontend, a.uiURL, b.mcpURL, b.frontend, b.uiURL)

	code, _, stderr := runBinary(t, bin, dirA, 2*time.Minute, "dev")
	if code != 1 || !strings.Contains(stderr, "is in use by another baton dev (pid ") || !strings.Contains(stderr, "--data") {
		t.Errorf("a second baton dev in the first's folder: exit %d, stderr:\n%s", code, stderr)
	}
	if res := callTool(t, a.mcpURL, a.agentToken, "describe", map[string]any{}); res["ok"] != true {
		t.Errorf("the first baton dev after the third was refused: describe answered %v", res)
	}
}

// A port named by its flag must be free: baton dev stops before it starts
// anything (no PostgreSQL cluster made), naming the flag.
func TestDevNamedPortTaken(t *testing.T) {
	bin := batonBinary(t)
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	port := strings.TrimPrefix(held.Addr().String(), "127.0.0.1:")
	for _, c := range []struct{ args []string }{
		{[]string{"--listen", "127.0.0.1:" + port}},
		{[]string{"--temporal-port", port}},
		{[]string{"--ui-port", port}},
	} {
		dir := openDir(t)
		code, _, stderr := runBinary(t, bin, dir, time.Minute, append([]string{"dev"}, c.args...)...)
		if code != 1 || !strings.Contains(stderr, strings.Join(c.args, " ")+": the port is taken") {
			t.Errorf("baton dev %s with the port taken: exit %d, stderr:\n%s", strings.Join(c.args, " "), code, stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, ".baton", "postgres")); !os.IsNotExist(err) {
			t.Errorf("baton dev %s started PostgreSQL before refusing the port (%v)", strings.Join(c.args, " "), err)
		}
	}
}

// hostPort is the host:port of an http URL.
func hostPort(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}
