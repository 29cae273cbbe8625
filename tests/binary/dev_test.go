package binary

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/internal/soak"
	"github.com/baton-run/baton/internal/testing/crmtest"
	"github.com/baton-run/baton/interpreter"
)

// The two organizations of the dev server: its default one, whose tokens
// name none, and o_beta.
const (
	orgA = "o_default"
	orgB = "o_beta"
)

// intakeProcess opens a ticket through the organization's crm, with the
// customer's letter attached, and has a reviewer approve it.
const intakeProcess = `---
name: intake
description: Open a ticket for a customer's letter and have it checked.
steps:
  - id: open
    agent: Open a ticket with crm/create_ticket and attach the customer's letter.
    tools: [crm/create_ticket]
    output: { ticket: string }
    evidence: [file]
  - id: check
    person: reviewers
    approve: Check the ticket against the letter.
    next: done
  - id: done
    finish: ok
---

# Intake

Every letter gets a ticket, and a reviewer checks it.
`

// toolsFile registers one crm, whose create_ticket is a keyed write.
const toolsFile = `servers:
  - name: crm
    url: %s
    timeout: 10s
    tools:
      create_ticket: { policy: write, idempotency: key }
`

// devServer is one `baton dev` process serving orgA and orgB, each
// organization with a crm of its own.
type devServer struct {
	data   string
	proc   *soak.Process
	base   string // http://127.0.0.1:PORT
	mcpURL string
	crm    map[string]*crmtest.Server // by organization

	mu     sync.Mutex
	tokens map[string]string
}

// startDev starts the dev server in dir.
func startDev(ctx context.Context, dir string) (*devServer, error) {
	d := &devServer{data: filepath.Join(dir, "data"), crm: map[string]*crmtest.Server{}, tokens: map[string]string{}}
	procDir := filepath.Join(dir, "processes", "intake")
	if err := os.MkdirAll(procDir, 0o755); err != nil {
		return d, err
	}
	if err := os.WriteFile(filepath.Join(procDir, "PROCESS.md"), []byte(intakeProcess), 0o644); err != nil {
		return d, err
	}
	args := []string{"dev", "--data", d.data, "--temporal-port", "0", "--ui-port", "0", "--ops-listen", "127.0.0.1:0",
		"--processes", procDir, "--processes", orgB + "=" + procDir}
	for _, org := range []string{orgA, orgB} {
		crm, err := crmtest.Start(nil)
		if err != nil {
			return d, err
		}
		d.crm[org] = crm
		tools := filepath.Join(dir, org+"-tools.yaml")
		if err := os.WriteFile(tools, []byte(fmt.Sprintf(toolsFile, crm.URL())), 0o644); err != nil {
			return d, err
		}
		args = append(args, "--tools", org+"="+tools)
	}
	port, err := freePort()
	if err != nil {
		return d, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	args = append(args, "--listen", addr)
	d.base, d.mcpURL = "http://"+addr, "http://"+addr+"/mcp"
	d.proc = &soak.Process{Name: "baton dev", Path: binary, Args: args, Ready: regexp.MustCompile(`^MCP: `)}
	deadline, _ := ctx.Deadline()
	return d, d.proc.Start(time.Until(deadline))
}

// stop stops the dev server and the crms.
func (d *devServer) stop() {
	if d.proc != nil {
		d.proc.Stop()
	}
	for _, crm := range d.crm {
		crm.Close()
	}
}

// checkHealthy fails t for every panic the dev server printed and for an
// exit it was not asked for.
func (d *devServer) checkHealthy(t *testing.T) {
	t.Helper()
	for _, line := range d.proc.Panics() {
		t.Errorf("baton dev panicked: %s", line)
	}
	for _, e := range d.proc.UnexpectedExits() {
		t.Errorf("baton dev: %s\n%s", e, d.proc.Tail())
	}
}

// baton runs the binary with args and returns its standard output; a
// failure carries its standard error.
func baton(args ...string) (string, error) {
	cmd := exec.Command(binary, args...)
	cmd.Env = soak.ChildEnv()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("baton %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out), nil
}

// tokenArgs are the arguments of `baton token` for an identity of org.
func (d *devServer) tokenArgs(org string, w drive.Who) []string {
	args := []string{"token", "--data", d.data}
	if org != orgA {
		args = append(args, "--org", org)
	}
	switch w.Kind {
	case interpreter.ActorAgent:
		args = append(args, "--agent", w.ID)
	case interpreter.ActorOperator:
		args = append(args, "--operator", w.ID)
	default:
		args = append(args, "--person", w.ID)
	}
	for _, g := range w.Groups {
		args = append(args, "--group", g)
	}
	return args
}

// token mints the token of an identity of org with `baton token`, once.
func (d *devServer) token(org string, w drive.Who) (string, error) {
	args := d.tokenArgs(org, w)
	key := strings.Join(args, " ")
	d.mu.Lock()
	tok, ok := d.tokens[key]
	d.mu.Unlock()
	if ok {
		return tok, nil
	}
	out, err := baton(args...)
	if err != nil {
		return "", err
	}
	tok = strings.TrimSpace(out)
	d.mu.Lock()
	d.tokens[key] = tok
	d.mu.Unlock()
	return tok, nil
}

// driver is an MCP client of the dev server whose identities belong to
// org, with tokens from `baton token`.
func (d *devServer) driver(t *testing.T, org string) *drive.MCP {
	t.Helper()
	drv := drive.NewMCP(d.mcpURL, func(w drive.Who) (string, error) { return d.token(org, w) }, nil)
	t.Cleanup(func() { drv.Close() })
	return drv
}

// freePort is a loopback port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
