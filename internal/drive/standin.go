package drive

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"

	"github.com/baton-run/baton/interpreter"
)

// This file holds what the drivers below the gateway (the machine and the
// workflow) do in the gateway's place: resolve process names, address
// leases by token, keep uploaded files and turn tool arguments into the
// machine's commands.

// Processes resolves the process names that drivers below the gateway are
// asked to start, standing in for the registry: every process is version 1.
type Processes map[string]*interpreter.Process

func (ps Processes) lookup(name string) (*interpreter.Process, error) {
	if p := ps[name]; p != nil {
		return p, nil
	}
	return nil, interpreter.ErrNoProcess(name)
}

// lease is what a token stands for below the gateway: the gateway signs a
// token over a lease's run, step and id; below it the token is that
// address in the clear.
type lease struct{ run, step, id string }

func (l lease) token() string { return l.run + "|" + l.step + "|" + l.id }

func parseToken(token string) (lease, error) {
	parts := strings.Split(token, "|")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return lease{}, interpreter.Refuse(interpreter.CodeInvalid, "The token is not one this server issued; claim the step again.", "token: malformed")
	}
	return lease{parts[0], parts[1], parts[2]}, nil
}

// files keeps uploads by id, so a submission's file evidence can be
// verified as the gateway verifies it against its store.
type files struct {
	mu   sync.Mutex
	sums map[string]string
}

func (f *files) upload(content []byte) string {
	sum := sha256.Sum256(content)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.sums == nil {
		f.sums = map[string]string{}
	}
	id := fmt.Sprintf("f_%d", len(f.sums)+1)
	f.sums[id] = hex.EncodeToString(sum[:])
	return id
}

// submission turns submitted work into the machine's submission, with
// every file reference checked against the uploads.
func (f *files) submission(w Work) interpreter.Submission {
	sub := interpreter.Submission{Output: w.Output, Evidence: w.Evidence, Summary: w.Summary, Next: w.Next, Reason: w.Reason}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, e := range w.Evidence {
		if e.Kind != "file" {
			continue
		}
		if sub.Files == nil {
			sub.Files = map[string]interpreter.FileCheck{}
		}
		sum, ok := f.sums[e.Ref]
		sub.Files[e.Ref] = interpreter.FileCheck{Found: ok, Matches: ok, SHA256: sum}
	}
	return sub
}

// decide turns a decision into the machine's command.
func (f *files) decide(who Who, d Decision) interpreter.Decide {
	c := interpreter.Decide{WorkItemID: d.WorkItemID, Snapshot: d.Snapshot, Decision: d.Decision, Actor: who, Note: d.Note}
	if d.Work != nil {
		c.Submission = f.submission(*d.Work)
	}
	return c
}
