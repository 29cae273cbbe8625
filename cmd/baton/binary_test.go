package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The real binary, started as a user starts it: these tests build
// cmd/baton once and run it in folders of their own.

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// batonBinary builds cmd/baton once per test binary and returns its path.
func batonBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "baton-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "baton")
		cmd := exec.Command("go", "build", "-o", binPath, ".")
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// openDir returns a fresh folder that every user may enter: baton dev run
// as root runs PostgreSQL as the postgres user, which must reach the data
// folder inside it.
func openDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "baton-bin-dev-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// cleanEnv is the environment without BATON_* variables, so that only the
// arguments a test gives configure the binary.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BATON_") {
			env = append(env, kv)
		}
	}
	return env
}

// binDev is a `baton dev` process and what it printed once ready.
type binDev struct {
	cmd     *exec.Cmd
	out     *syncBuffer
	errOut  *syncBuffer
	done    chan error
	dir     string
	args    []string
	printed string
	// From the printed lines.
	mcpURL, inboxURL, uiURL, frontend string
	agentToken, personToken           string
}

// startBinaryDev runs the binary with args in dir and waits until it prints
// its MCP URL. It is stopped (SIGTERM) when the test ends.
func startBinaryDev(t *testing.T, bin, dir string, args ...string) *binDev {
	t.Helper()
	d := launchBinaryDev(t, bin, dir, args...)
	d.await(t)
	return d
}

// launchBinaryDev runs the binary with args in dir; await waits until it is
// ready. It is stopped (SIGTERM) when the test ends.
func launchBinaryDev(t *testing.T, bin, dir string, args ...string) *binDev {
	t.Helper()
	d := &binDev{out: &syncBuffer{}, errOut: &syncBuffer{}, done: make(chan error, 1), dir: dir, args: args}
	d.cmd = exec.Command(bin, args...)
	d.cmd.Dir, d.cmd.Env = dir, cleanEnv()
	d.cmd.Stdout, d.cmd.Stderr = d.out, d.errOut
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.done <- d.cmd.Wait() }()
	t.Cleanup(func() { d.stop(t) })
	return d
}

// await waits until the process prints its MCP URL and reads what it
// printed.
func (d *binDev) await(t *testing.T) {
	t.Helper()
	dir, args := d.dir, d.args
	mcpLine := regexp.MustCompile(`(?m)^MCP: (\S+)$`)
	deadline := time.Now().Add(5 * time.Minute)
	for !mcpLine.MatchString(d.out.String()) {
		select {
		case err := <-d.done:
			d.done <- err
			t.Fatalf("baton %s in %s ended before it was ready: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), dir, err, d.out, d.errOut)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("baton %s not ready after 5 minutes:\n%s\nstderr:\n%s", strings.Join(args, " "), d.out, d.errOut)
		}
	}
	d.printed = d.out.String()
	find := func(re string) string {
		if m := regexp.MustCompile(re).FindStringSubmatch(d.printed); m != nil {
			return m[1]
		}
		return ""
	}
	d.mcpURL = find(`(?m)^MCP: (\S+)$`)
	d.inboxURL = find(`(?m)^Inbox: (\S+)`)
	d.uiURL = find(`(?m)^Temporal UI: (\S+)$`)
	d.frontend = find(`(?m)^Temporal frontend: (\S+)`)
	d.agentToken = find(`(?m)^  agent a_dev: +(\S+)$`)
	d.personToken = find(`(?m)^  person dev@example.com: +(\S+)$`)
	if d.agentToken == "" || d.uiURL == "" || d.frontend == "" {
		t.Fatalf("baton dev printed no agent token, Temporal UI or frontend:\n%s", d.printed)
	}
}

// stop ends the process as Ctrl-C does and waits for it.
func (d *binDev) stop(t *testing.T) {
	if d.cmd.ProcessState != nil {
		return
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(time.Minute):
		_ = d.cmd.Process.Kill()
		<-d.done
		t.Errorf("baton dev did not stop within a minute of SIGTERM")
	}
}

// runBinary runs the binary with args in dir and returns its exit status
// and output; it fails the test if it runs longer than limit.
func runBinary(t *testing.T, bin, dir string, limit time.Duration, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, cleanEnv(), &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(limit):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("baton %s ran longer than %v:\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), limit, out.String(), errOut.String())
	}
	return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
}

// callTool posts one tools/call to an MCP URL with a bearer token and
// returns the result's structured content, {ok, data | error}.
func callTool(t *testing.T, mcpURL, token, tool string, args any) map[string]any {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args}})
	req, err := http.NewRequest(http.MethodPost, mcpURL, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	if err != nil {
		t.Fatalf("%s at %s: %v", tool, mcpURL, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var msg struct {
		Result struct {
			StructuredContent map[string]any `json:"structuredContent"`
		} `json:"result"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &msg) != nil || msg.Result.StructuredContent == nil {
		t.Fatalf("%s at %s: %s\n%s", tool, mcpURL, resp.Status, b)
	}
	return msg.Result.StructuredContent
}
