package interpreter

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// FileCheck is what the host found for one file evidence reference.
type FileCheck struct {
	// Found is true when the upload exists in the organization.
	Found bool
	// Matches is true when the stored bytes still hash to SHA256.
	Matches bool
	SHA256  string
}

// Submission is the work offered to complete an agent or task step.
type Submission struct {
	Output   Values
	Evidence []Evidence
	// Summary is required (non-blank) from agents, optional from people.
	Summary *string
	Next    *string
	Reason  *string
	// Files holds the host's verification of each file reference in
	// Evidence, by ref.
	Files map[string]FileCheck
}

// Submit completes a claimed agent step.
type Submit struct {
	StepID  string
	LeaseID string
	Actor   Actor
	Submission
}

func (c Submit) apply(m *Machine, now time.Time) (any, error) {
	if err := m.live(now); err != nil {
		return nil, err
	}
	s, sr, err := m.leased(c.StepID, c.LeaseID, c.Actor)
	if err != nil {
		return nil, err
	}
	if sr.Checking != "" {
		return nil, errBeingChecked()
	}
	if s.Check != nil {
		// The objective rules first; a check follows (check_commands.go).
		return m.startCheck(s, sr, nil, c.Submission, true, c.Actor.ID, now)
	}
	if err := m.accept(s, c.Submission, true, c.Actor.ID, nil, now); err != nil {
		return nil, err
	}
	m.refreshState()
	m.touch(now)
	return m.View(now), nil
}

// accept applies the acceptance rules of spec §6 rule 3 and, when every
// rule holds, completes the step and moves on. Otherwise it returns
// not_accepted with every issue; the caller discards the changed state.
func (m *Machine) accept(s *Step, sub Submission, needSummary bool, by string, check json.RawMessage, now time.Time) error {
	var issues []string
	output := sub.Output
	if output == nil {
		output = map[string]any{}
	}
	issues = append(issues, CheckValues("output", s.Output, output)...)

	verified := map[string]bool{}
	evidence := make([]Evidence, 0, len(sub.Evidence))
	for i, e := range sub.Evidence {
		item := Evidence{Kind: e.Kind, Ref: e.Ref}
		switch e.Kind {
		case "file":
			fc, ok := sub.Files[e.Ref]
			switch {
			case !ok || !fc.Found:
				issues = append(issues, fmt.Sprintf("evidence %s: not found", e.Ref))
			case !fc.Matches:
				issues = append(issues, fmt.Sprintf("evidence %s: content does not match its hash", e.Ref))
			default:
				verified["file"] = true
				item.SHA256 = fc.SHA256
			}
		case "link":
			if strings.TrimSpace(e.Ref) == "" {
				issues = append(issues, fmt.Sprintf("evidence[%d].ref: missing", i))
			} else {
				verified["link"] = true
			}
		default:
			issues = append(issues, fmt.Sprintf("evidence[%d].kind: not one of file, link", i))
		}
		evidence = append(evidence, item)
	}
	for _, k := range s.Evidence {
		if !verified[k] && !hasKind(sub.Evidence, k) {
			issues = append(issues, fmt.Sprintf("evidence: %s required", k))
		}
	}

	to := ""
	if s.NextList {
		names := routeNames(s.Next)
		switch {
		case sub.Next == nil || strings.TrimSpace(*sub.Next) == "":
			issues = append(issues, "next: required, one of "+names)
		case !hasRoute(s.Next, *sub.Next):
			issues = append(issues, "next: not one of "+names)
		default:
			to = *sub.Next
		}
		if sub.Reason == nil || strings.TrimSpace(*sub.Reason) == "" {
			issues = append(issues, "reason: required")
		}
	} else {
		if sub.Next != nil {
			issues = append(issues, "next: not allowed, this step has one next")
		}
		if sub.Reason != nil {
			issues = append(issues, "reason: not allowed, this step has one next")
		}
		to = m.single(s)
	}
	if needSummary && (sub.Summary == nil || strings.TrimSpace(*sub.Summary) == "") {
		issues = append(issues, "summary: missing")
	}

	rec := &Record{Output: output, Check: check, By: by, At: FormatTime(now)}
	if len(sub.Evidence) > 0 {
		rec.Evidence = evidence
	}
	if sub.Summary != nil && strings.TrimSpace(*sub.Summary) != "" {
		rec.Summary = *sub.Summary
	}
	if s.NextList {
		rec.Next = to
		if sub.Reason != nil {
			rec.Reason = *sub.Reason
		}
	}
	m.record(s.ID, rec)
	if size := m.dataSize(); size > m.run.Limits.RunDataBytes {
		issues = append(issues, fmt.Sprintf("run data: over %d bytes", m.run.Limits.RunDataBytes))
	}
	if len(issues) > 0 {
		return Refuse(CodeNotAccepted, "The submission was not accepted: "+strings.Join(issues, "; ")+".", issues...)
	}
	// The record is in place; mark the step done without recording again.
	m.complete(s, nil, now)
	m.advance(s, to, now)
	return nil
}

func hasKind(ev []Evidence, kind string) bool {
	for _, e := range ev {
		if e.Kind == kind {
			return true
		}
	}
	return false
}

func hasRoute(routes []Route, to string) bool {
	for _, r := range routes {
		if r.To == to {
			return true
		}
	}
	return false
}

func routeNames(routes []Route) string {
	names := make([]string, len(routes))
	for i, r := range routes {
		names[i] = r.To
	}
	return strings.Join(names, ", ")
}
