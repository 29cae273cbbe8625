package soak

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// The processes of the mix, each published in Org with its roles bound to
// the groups of the same names.
const (
	// ProcessReview is drafted by an agent and approved by a reviewer, who
	// may send it back into rework.
	ProcessReview = "soak-review"
	// ProcessEvents waits for an event after its agent step: the event may
	// come before the wait (held) or after.
	ProcessEvents = "soak-events"
	// ProcessTools calls a tool of every policy in its agent step.
	ProcessTools = "soak-tools"
)

// The groups of the mix's people.
const (
	GroupReviewers = "reviewers"
	GroupApprovers = "approvers"
)

// EventPaid is the event ProcessEvents waits for.
const EventPaid = "paid"

// ToolServerName is the tool server's name in the registration.
const ToolServerName = "soak"

var processSources = map[string]string{
	ProcessReview: `---
name: soak-review
description: An agent drafts a text; a reviewer approves it or sends it back.
steps:
  - id: draft
    agent: Draft the text. When it was sent back, read the reviewer's note first.
    output: { text: string }
  - id: review
    person: reviewers
    approve: Approve the draft, or reject it back to drafting with a note.
    on_reject: draft
    next: done
  - id: done
    finish: ok
---

# Review

Drafted, reviewed, reworked until approved.
`,
	ProcessEvents: `---
name: soak-events
description: An agent does the work, then the run waits for the payment.
steps:
  - id: work
    agent: Do the work.
    output: { done: boolean }
  - id: settle
    wait_for: paid
    next: done
  - id: done
    finish: ok
---

# Events

The payment may arrive before the work is done: it is held until the wait.
`,
	ProcessTools: `---
name: soak-tools
description: An agent calls a tool of every policy, the refund after an approver says yes.
steps:
  - id: call
    agent: Look up, open a ticket, write a note, and refund once approved.
    tools: [soak/lookup, soak/ticket, soak/note, soak/refund]
    output: { done: boolean }
  - id: done
    finish: ok
---

# Tools

A refund runs only once an approver approved the exact call.
`,
}

// toolsRegistration registers the tool server, one tool per policy.
const toolsRegistration = `servers:
  - name: soak
    url: %s
    timeout: 10s
    tools:
      lookup: read
      ticket: { policy: write, idempotency: key }
      note: { policy: write, idempotency: none }
      refund: { policy: approval_required, idempotency: key, approvers: [approvers] }
`

// writeToolsFile writes the registration of the tool server at url into
// dir and returns its path.
func writeToolsFile(dir, url string) (string, error) {
	path := filepath.Join(dir, "tools.yaml")
	return path, os.WriteFile(path, []byte(fmt.Sprintf(toolsRegistration, url)), 0o644)
}

// publishAll publishes the mix's processes.
func (d *Deployment) publishAll(ctx context.Context) error {
	for name, src := range processSources {
		dir := filepath.Join(d.opts.Dir, "processes", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "PROCESS.md"), []byte(src), 0o644); err != nil {
			return err
		}
		if err := d.Publish(ctx, dir, name); err != nil {
			return err
		}
	}
	return nil
}
