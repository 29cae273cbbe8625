package inbox

import (
	"encoding/json"
	"regexp"
	"strings"
)

// toolCall is the downstream tool call an item of baton-tools-1 shows: an
// approval of an exact call (profile-tools §4.2), or the operators'
// question whether a call of unknown outcome happened (§6.4). The inbox
// reads it from the item's text, whose form the profile fixes, and shows
// the tool, the exact arguments and the digest apart from the prose.
type toolCall struct {
	Intro     string // the text before the call
	Tool      string
	Arguments string // exactly as the text shows them
	Step      string
	Agent     string
	Digest    string
	Sent      string
	Outro     string // the text after the call
}

var digestPattern = regexp.MustCompile(`^[0-9a-f]{64}$`)

// parseToolCall reads a tool call from a work item's text, or returns
// false when the text does not hold one.
func parseToolCall(text string) (*toolCall, bool) {
	lines := strings.Split(text, "\n")
	start := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "Tool: ") && i+1 < len(lines) && lines[i+1] == "Arguments:" {
			start = i
			break
		}
	}
	if start < 0 {
		return nil, false
	}
	c := &toolCall{Intro: strings.TrimSpace(strings.Join(lines[:start], "\n")), Tool: strings.TrimPrefix(lines[start], "Tool: ")}
	i := start + 2
	var args []string
	for ; i < len(lines) && !strings.HasPrefix(lines[i], "Step: "); i++ {
		args = append(args, lines[i])
	}
	c.Arguments = strings.Join(args, "\n")
	if i == len(lines) || !json.Valid([]byte(c.Arguments)) {
		return nil, false
	}
	for ; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "Step: "):
			c.Step = strings.TrimPrefix(l, "Step: ")
		case strings.HasPrefix(l, "Agent: "):
			c.Agent = strings.TrimPrefix(l, "Agent: ")
		case strings.HasPrefix(l, "Digest: "):
			c.Digest = strings.TrimPrefix(l, "Digest: ")
		case strings.HasPrefix(l, "Sent: "):
			c.Sent = strings.TrimPrefix(l, "Sent: ")
		default:
			c.Outro = strings.TrimSpace(strings.Join(lines[i:], "\n"))
			i = len(lines)
		}
	}
	if !digestPattern.MatchString(c.Digest) {
		return nil, false
	}
	return c, true
}
