package interpreter

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gowebpki/jcs"
)

// This file holds what the baton-tools-1 profile (docs/profile-tools.md)
// needs from the interpreter: the policies, the catalog of registered tools
// that publication checks a step's tools: key against, the resolution of a
// step's tool against the registration at call time, the digest and
// idempotency key of a call, and the shapes and texts the journal, the claim
// extension, call_tool and the work items use. Reading the tools: key is
// parse_tools.go's.

// ProfileTools names Baton's own profile: agents call downstream tools
// through Baton under per-tool policies.
const ProfileTools = "baton-tools-1"

// Limits of the profile, fixed in version 1 (profile-tools §4.1).
const (
	// MaxToolArgumentsBytes bounds a call's arguments, as canonical JSON.
	MaxToolArgumentsBytes = 65536
	// MaxToolResultBytes bounds a downstream result kept in the journal and
	// returned to the agent, as JSON.
	MaxToolResultBytes = 262144
	// MaxToolCallsPerStep bounds the distinct calls one step's journal holds.
	MaxToolCallsPerStep = 100
	// ToolCallAttempts is how many times a read or idempotency: key call is
	// sent before the agent gets retry.
	ToolCallAttempts = 3
)

// IssueDivergentCall is the conflict issue of a call that differs from the
// approved call of the same tool.
const IssueDivergentCall = "divergent_call"

// Policy is how a registered tool may be called (profile-tools §2).
type Policy string

// The policies, loosest first.
const (
	PolicyRead             Policy = "read"
	PolicyWrite            Policy = "write"
	PolicyApprovalRequired Policy = "approval_required"
)

// Policies lists the policies, loosest first.
var Policies = []Policy{PolicyRead, PolicyWrite, PolicyApprovalRequired}

// String returns the policy word.
func (p Policy) String() string { return string(p) }

// Valid reports whether p is one of the three policies.
func (p Policy) Valid() bool { return p.rank() > 0 }

// rank orders the policies: read 1, write 2, approval_required 3, anything
// else 0.
func (p Policy) rank() int {
	switch p {
	case PolicyRead:
		return 1
	case PolicyWrite:
		return 2
	case PolicyApprovalRequired:
		return 3
	}
	return 0
}

// Looser reports whether p is looser than q: read < write <
// approval_required.
func (p Policy) Looser(q Policy) bool { return p.rank() < q.rank() }

// Tightest returns the tighter of p and q.
func (p Policy) Tightest(q Policy) Policy {
	if p.Looser(q) {
		return q
	}
	return p
}

// Idempotency says what a downstream server does with the idempotency key
// (profile-tools §1.1).
type Idempotency string

// The idempotency kinds.
const (
	// IdempotencyByKey: the server deduplicates by the key, so a call may
	// be sent again when Baton does not know whether it arrived.
	IdempotencyByKey Idempotency = "key"
	// IdempotencyNone: it does not, so a call is sent at most once.
	IdempotencyNone Idempotency = "none"
)

// String returns the word.
func (i Idempotency) String() string { return string(i) }

// Valid reports whether i is key or none.
func (i Idempotency) Valid() bool { return i == IdempotencyByKey || i == IdempotencyNone }

// CatalogTool is one registered tool as publication and calls see it: the
// registration's policy and the groups that approve it.
type CatalogTool struct {
	Server      string      `json:"server"`
	Tool        string      `json:"tool"`
	Policy      Policy      `json:"policy"`
	Idempotency Idempotency `json:"idempotency"`
	// Approvers are group ids (a registration binds no roles).
	Approvers []string `json:"approvers,omitempty"`
	// ApprovalSLA is how long an approval may wait; 0 for none.
	ApprovalSLA time.Duration `json:"approvalSla,omitempty"`
}

// Ref returns "server/tool".
func (t CatalogTool) Ref() string { return t.Server + "/" + t.Tool }

// ToolCatalog is every tool an organization registered. The zero value is
// an empty catalog.
type ToolCatalog struct {
	Tools []CatalogTool `json:"tools"`
}

// Lookup returns the tool registered as ref ("server/tool").
func (c *ToolCatalog) Lookup(ref string) (CatalogTool, bool) {
	if c == nil {
		return CatalogTool{}, false
	}
	server, tool, ok := SplitToolRef(ref)
	if !ok {
		return CatalogTool{}, false
	}
	for _, t := range c.Tools {
		if t.Server == server && t.Tool == tool {
			return t, true
		}
	}
	return CatalogTool{}, false
}

// Servers returns the registered server names, sorted, once each.
func (c *ToolCatalog) Servers() []string {
	if c == nil {
		return nil
	}
	var out []string
	for _, t := range c.Tools {
		if !slices.Contains(out, t.Server) {
			out = append(out, t.Server)
		}
	}
	slices.Sort(out)
	return out
}

// ServerTools returns the tool names registered on server, sorted.
func (c *ToolCatalog) ServerTools(server string) []string {
	if c == nil {
		return nil
	}
	var out []string
	for _, t := range c.Tools {
		if t.Server == server {
			out = append(out, t.Tool)
		}
	}
	slices.Sort(out)
	return out
}

// SplitToolRef splits "server/tool"; ok is false unless both parts are
// non-empty and there is exactly one slash. Whether they are valid names is
// the registration's concern.
func SplitToolRef(ref string) (server, tool string, ok bool) {
	server, tool, ok = strings.Cut(ref, "/")
	if !ok || server == "" || tool == "" || strings.Contains(tool, "/") {
		return "", "", false
	}
	return server, tool, true
}

// ToolUse is one entry of an agent step's tools: key.
type ToolUse struct {
	// Ref is "server/tool".
	Ref string `json:"ref"`
	// Policy is the step's own policy, "" when it names none (the
	// registration's applies). It is never looser than the registration's
	// at publication.
	Policy Policy `json:"policy,omitempty"`
	// Approvers are role names, bound to groups at publication. A step
	// that names approvers makes the tool approval_required.
	Approvers []string `json:"approvers,omitempty"`
	// Short is true when the entry was written as a bare reference.
	Short bool `json:"short,omitempty"`
}

// ToolUse returns the step's entry for ref, or nil when the step may not
// call it.
func (s *Step) ToolUse(ref string) *ToolUse {
	for i := range s.Tools {
		if s.Tools[i].Ref == ref {
			return &s.Tools[i]
		}
	}
	return nil
}

// EffectivePolicy is the policy a call of the tool runs under when the
// registration gives it reg ("" when the tool is not registered): the
// tighter of reg and the step's own, and approval_required when the step
// names approvers (profile-tools §3). Publication, call_tool and a
// claim's extension all take it from here.
func (u ToolUse) EffectivePolicy(reg Policy) Policy {
	p := reg
	if u.Policy != "" {
		p = p.Tightest(u.Policy)
	}
	if len(u.Approvers) > 0 {
		// A step that names approvers wants approval.
		p = PolicyApprovalRequired
	}
	return p
}

// ResolvedTool is what one call of a step's tool runs under: the step's
// entry combined with the registration as it stands, roles bound to groups.
type ResolvedTool struct {
	Ref         string      `json:"ref"`
	Server      string      `json:"server"`
	Tool        string      `json:"tool"`
	Policy      Policy      `json:"policy"`
	Idempotency Idempotency `json:"idempotency"`
	// Approvers are the groups an approval item is assigned to: the step's
	// approver roles' groups when the step names any, else the
	// registration's groups. Empty unless Policy is approval_required.
	Approvers []string `json:"approvers,omitempty"`
	// Floor are the registration's groups when the step names its own
	// approvers too: a deciding person must also be in one of them. Empty
	// when no floor applies.
	Floor []string `json:"floor,omitempty"`
	// ApprovalSLA is the registration's; 0 for none.
	ApprovalSLA time.Duration `json:"approvalSla,omitempty"`
}

// Errors of ResolveTool.
var (
	// ErrToolMismatch: the registration is for another tool than the use.
	ErrToolMismatch = errors.New("the registration is for another tool")
	// ErrNoApprovers: the call needs approval and nobody may give it (the
	// registration dropped the approvers the step relied on).
	ErrNoApprovers = errors.New("the call needs approval and no one may give it")
	// ErrUnboundApprover: a step approver role has no group bound.
	ErrUnboundApprover = errors.New("an approver role is not bound to a group")
)

// ResolveTool combines a step's tool entry with its registration and the
// run's role bindings (role name → group id): the tighter policy, the
// registration's idempotency and SLA, and who approves (profile-tools §3).
// It is what call_tool runs under; a call resolved with an error is
// refused.
func ResolveTool(use ToolUse, reg CatalogTool, roles map[string]string) (ResolvedTool, error) {
	if use.Ref != reg.Ref() {
		return ResolvedTool{}, fmt.Errorf("resolve %s: %w (%s)", use.Ref, ErrToolMismatch, reg.Ref())
	}
	r := ResolvedTool{
		Ref: use.Ref, Server: reg.Server, Tool: reg.Tool,
		Policy: use.EffectivePolicy(reg.Policy), Idempotency: reg.Idempotency, ApprovalSLA: reg.ApprovalSLA,
	}
	if !r.Idempotency.Valid() {
		r.Idempotency = IdempotencyNone
	}
	if r.Policy != PolicyApprovalRequired {
		return r, nil
	}
	if len(use.Approvers) > 0 {
		for _, role := range use.Approvers {
			g := roles[role]
			if g == "" {
				return ResolvedTool{}, fmt.Errorf("resolve %s: %w: %s", use.Ref, ErrUnboundApprover, role)
			}
			if !slices.Contains(r.Approvers, g) {
				r.Approvers = append(r.Approvers, g)
			}
		}
		r.Floor = slices.Clone(reg.Approvers)
	} else {
		r.Approvers = slices.Clone(reg.Approvers)
	}
	if len(r.Approvers) == 0 {
		return ResolvedTool{}, fmt.Errorf("resolve %s: %w", use.Ref, ErrNoApprovers)
	}
	return r, nil
}

// MayApprove reports whether a person in groups may decide an approval of
// this call: in one of its approver groups and, when a floor applies, in
// one of the floor's groups too.
func (r ResolvedTool) MayApprove(groups []string) bool {
	in := func(set []string) bool {
		for _, g := range groups {
			if slices.Contains(set, g) {
				return true
			}
		}
		return false
	}
	return in(r.Approvers) && (len(r.Floor) == 0 || in(r.Floor))
}

// CheckCallArguments checks a call's arguments (profile-tools §5.1, §7): a
// JSON object, at most MaxToolArgumentsBytes as canonical JSON, whose
// numbers a double can hold. Empty or null arguments mean {}. It returns
// the arguments compacted, numbers and key order as written: what the
// journal keeps, the approver sees and the downstream server gets. A
// refusal is CodeInvalid.
func CheckCallArguments(raw []byte) (json.RawMessage, *Error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage("{}"), nil
	}
	if raw[0] != '{' {
		return nil, Refuse(CodeInvalid, "arguments must be a JSON object.", "arguments: expected object")
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, Refuse(CodeInvalid, "arguments are not valid JSON.", "arguments: "+err.Error())
	}
	if issues := inexactIntegers(buf.Bytes()); len(issues) > 0 {
		return nil, Refuse(CodeInvalid, "arguments hold an integer a double cannot hold exactly, which would share its digest with its neighbours; send it as a string.", issues...)
	}
	canon, err := jcs.Transform(buf.Bytes())
	if err != nil {
		return nil, Refuse(CodeInvalid, "arguments cannot be canonicalized (RFC 8785): "+err.Error()+". Numbers must fit in a double and keys must not repeat.", "arguments: "+err.Error())
	}
	if len(canon) > MaxToolArgumentsBytes {
		return nil, Refuse(CodeInvalid, fmt.Sprintf("arguments are %d bytes; the most a call may carry is %d.", len(canon), MaxToolArgumentsBytes),
			fmt.Sprintf("arguments: over %d bytes", MaxToolArgumentsBytes))
	}
	return json.RawMessage(buf.Bytes()), nil
}

// inexactIntegers returns an issue for each number of a valid JSON value
// whose value is an integer that a double cannot hold exactly (beyond
// 2^53, 9007199254740993 reads as ...992): the digest (RFC 8785) reads
// numbers as doubles, so two calls with neighbouring integers would share
// one digest, one approval and one idempotency key.
func inexactIntegers(raw []byte) []string {
	var issues []string
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var walk func(path string) bool
	walk = func(path string) bool {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch v := tok.(type) {
		case json.Delim:
			for i := 0; dec.More(); i++ {
				p := fmt.Sprintf("%s[%d]", path, i)
				if v == '{' {
					k, err := dec.Token()
					if err != nil {
						return false
					}
					p = path + "." + k.(string)
				}
				if !walk(p) {
					return false
				}
			}
			_, err := dec.Token()
			return err == nil
		case json.Number:
			if why := inexact(string(v)); why != "" {
				issues = append(issues, path+": "+why)
			}
		}
		return true
	}
	walk("arguments")
	return issues
}

// inexact says why a JSON number would not read back as written: an
// integer a double rounds, or a literal too long to check; "" for a
// fraction, an integer a double holds, or one past the double's range
// (the canonicalization refuses those).
func inexact(lit string) string {
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil || math.Abs(f) < 1<<53 {
		return ""
	}
	if len(lit) > maxNumberChars {
		return fmt.Sprintf("number of over %d characters", maxNumberChars)
	}
	r, ok := new(big.Rat).SetString(lit)
	if !ok || !r.IsInt() {
		return ""
	}
	if _, exact := r.Float64(); !exact {
		return "integer beyond 2^53 is not exact"
	}
	return ""
}

// maxNumberChars bounds a number literal of arguments whose exactness is
// checked: a double needs at most 767 significant digits.
const maxNumberChars = 800

// CallDigest returns the digest of a call (profile-tools §5.1): the
// lowercase hex SHA-256 of the RFC 8785 canonical JSON of
// {"tool": tool, "arguments": arguments}.
func CallDigest(tool string, arguments json.RawMessage) (string, error) {
	if len(bytes.TrimSpace(arguments)) == 0 {
		arguments = json.RawMessage("{}")
	}
	name, err := json.Marshal(tool)
	if err != nil {
		return "", err
	}
	doc := make([]byte, 0, len(arguments)+len(name)+24)
	doc = append(doc, `{"tool":`...)
	doc = append(doc, name...)
	doc = append(doc, `,"arguments":`...)
	doc = append(doc, arguments...)
	doc = append(doc, '}')
	canon, err := jcs.Transform(doc)
	if err != nil {
		return "", fmt.Errorf("digest of %s: %w", tool, err)
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:]), nil
}

// IdempotencyKey returns the idempotency key of a call (profile-tools
// §5.2): "bt1-" and the lowercase hex SHA-256 of the profile name, the
// organization, the run, the step and the call's digest, each followed by a
// NUL byte. It is stable for the same call in the same step of the same
// run, whatever the attempt.
func IdempotencyKey(org, runID, stepID, digest string) string {
	h := sha256.New()
	for _, part := range []string{ProfileTools, org, runID, stepID, digest} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return "bt1-" + hex.EncodeToString(h.Sum(nil))
}

// CallState is the state of a journal entry (profile-tools §5.3).
type CallState string

// The journal states.
const (
	CallProposed  CallState = "proposed"
	CallApproved  CallState = "approved"
	CallRejected  CallState = "rejected"
	CallStarted   CallState = "started"
	CallCompleted CallState = "completed"
	CallFailed    CallState = "failed"
	CallUnknown   CallState = "unknown"
)

// String returns the wire word.
func (s CallState) String() string { return string(s) }

// Final reports whether an entry in state s is never sent again:
// completed, failed and rejected.
func (s CallState) Final() bool {
	return s == CallCompleted || s == CallFailed || s == CallRejected
}

// CallDecision is a person's decision on a call: an approval decision
// (approved or rejected) or the answer on an unknown outcome (completed or
// failed).
type CallDecision struct {
	Decision string  `json:"decision"`
	By       string  `json:"by"`
	At       string  `json:"at"`
	Note     *string `json:"note"`
}

// JournalEntry is one distinct call of a step (profile-tools §5): its tool
// and arguments as first sent, its digest, and where it stands.
type JournalEntry struct {
	Tool        string          `json:"tool"`
	Arguments   json.RawMessage `json:"arguments"`
	Digest      string          `json:"digest"`
	Policy      Policy          `json:"policy"`
	Idempotency Idempotency     `json:"idempotency"`
	State       CallState       `json:"state"`
	// Agent made the first call, in claim number Attempt of the step.
	Agent   string `json:"agent"`
	Attempt int    `json:"attempt"`
	// At is when the call was first made.
	At         string        `json:"at"`
	WorkItemID *string       `json:"workItemId"`
	Decision   *CallDecision `json:"decision"`
	// IdempotencyKey is the key sent downstream.
	IdempotencyKey string  `json:"idempotencyKey"`
	StartedAt      *string `json:"startedAt"`
	EndedAt        *string `json:"endedAt"`
	// Result is the downstream CallToolResult as sent, or a text result
	// Baton wrote (a rejection, a person's answer, a test run); null until
	// there is one.
	Result     json.RawMessage `json:"result"`
	Resolution *CallDecision   `json:"resolution"`
	// Test marks a test-run call that was not sent.
	Test bool `json:"test,omitempty"`
}

// ToolsExtension is claim.extensions["baton-tools-1"] (profile-tools
// §4.1).
type ToolsExtension struct {
	Call    CallTemplate    `json:"call"`
	Tools   []ExtensionTool `json:"tools"`
	Journal []JournalEntry  `json:"journal"`
	Limits  ToolLimits      `json:"limits"`
}

// CallTemplate is the call_tool call to make, as get_work's claim is.
type CallTemplate struct {
	Tool      string                `json:"tool"`
	Arguments CallTemplateArguments `json:"arguments"`
}

// CallTemplateArguments are call_tool's arguments with placeholders for
// the tool and requestId.
type CallTemplateArguments struct {
	Token     string         `json:"token"`
	Tool      string         `json:"tool"`
	Arguments map[string]any `json:"arguments"`
	RequestID string         `json:"requestId"`
}

// NewCallTemplate returns the template of call_tool for a claim's token.
func NewCallTemplate(token string) CallTemplate {
	return CallTemplate{Tool: string(ToolCallTool), Arguments: CallTemplateArguments{
		Token: token, Tool: "<server/tool>", Arguments: map[string]any{}, RequestID: "<new UUID>",
	}}
}

// ExtensionTool is one of a step's tools as a claim shows it.
type ExtensionTool struct {
	Name   string `json:"name"`
	Policy Policy `json:"policy"`
	// Description and InputSchema come from the server's last tools/list;
	// null when it never answered one.
	Description *string         `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// ToolLimits are the profile's limits as a claim shows them.
type ToolLimits struct {
	ArgumentsBytes int `json:"argumentsBytes"`
	ResultBytes    int `json:"resultBytes"`
	CallsPerStep   int `json:"callsPerStep"`
}

// DefaultToolLimits returns the limits of version 1.
func DefaultToolLimits() ToolLimits {
	return ToolLimits{ArgumentsBytes: MaxToolArgumentsBytes, ResultBytes: MaxToolResultBytes, CallsPerStep: MaxToolCallsPerStep}
}

// CallStatus is call_tool's status (profile-tools §6).
type CallStatus string

// The statuses.
const (
	StatusCompleted        CallStatus = "completed"
	StatusFailed           CallStatus = "failed"
	StatusAwaitingApproval CallStatus = "awaiting_approval"
	StatusRejected         CallStatus = "rejected"
	StatusOutcomeUnknown   CallStatus = "outcome_unknown"
)

// CallResult is call_tool's data on ok: true.
type CallResult struct {
	Status     CallStatus      `json:"status"`
	Tool       string          `json:"tool"`
	Digest     string          `json:"digest"`
	Reused     bool            `json:"reused"`
	Result     json.RawMessage `json:"result"`
	WorkItemID *string         `json:"workItemId"`
	Message    string          `json:"message"`
}

// TextResult returns an MCP CallToolResult holding one text content.
func TextResult(text string, isError bool) json.RawMessage {
	b, _ := json.Marshal(struct {
		Content []map[string]string `json:"content"`
		IsError bool                `json:"isError"`
	}{[]map[string]string{{"type": "text", "text": text}}, isError})
	return b
}

// RejectedText is the answer of a rejected call (profile-tools §6.2).
func RejectedText(note string) string {
	return "Rejected: a person did not approve this call. Reason: " + note
}

// RejectedResult is the result of a rejected call.
func RejectedResult(note string) json.RawMessage { return TextResult(RejectedText(note), true) }

// TestRunResult is the result of a test-run call that was not sent
// (profile-tools §6.6).
func TestRunResult(ref string) json.RawMessage {
	server, _, _ := SplitToolRef(ref)
	return TextResult(fmt.Sprintf("Test run: %s was not sent (%s has no test_url).", ref, server), false)
}

// ErrDivergentCall is the refusal of a call of a tool whose approved call
// has not run yet (profile-tools §6.1 step 3).
func ErrDivergentCall(tool, approvedDigest string, approvedAttempt int, digest string) *Error {
	return Refuse(CodeConflict, fmt.Sprintf(
		"%s was approved for digest %s (the call proposed in attempt %d); this call's digest is %s. Repeat the approved call exactly, with the arguments in the journal.",
		tool, approvedDigest, approvedAttempt, digest), IssueDivergentCall)
}

// CallText describes a call for a person's work item.
type CallText struct {
	Tool      string
	Arguments json.RawMessage
	StepID    string
	Process   string
	Version   int
	RunID     string
	Agent     string
	Attempt   int
	Digest    string
	// Test is true in a run started with mode: test.
	Test bool
	// SentAt and Why say, for an unknown outcome, when the call was sent
	// and why its outcome is not known.
	SentAt string
	Why    string
}

// ApprovalText is the text of an approval work item (profile-tools §4.2).
func ApprovalText(c CallText) string {
	var b strings.Builder
	if c.Test {
		b.WriteString("This is a test run. ")
	}
	fmt.Fprintf(&b, "An agent asks to call %s. Approve only if this exact call should run; it runs once, exactly as shown.\n\n", c.Tool)
	c.describe(&b)
	b.WriteString("\nApprove to let the agent run it. Reject with a note to refuse it; the agent reads your note.")
	return b.String()
}

// UnknownOutcomeText is the text of the operators' work item for a call
// whose outcome is unknown (profile-tools §6.4).
func UnknownOutcomeText(c CallText) string {
	var b strings.Builder
	if c.Test {
		b.WriteString("This is a test run. ")
	}
	fmt.Fprintf(&b, "Baton sent this call to %s and does not know whether it happened", c.Tool)
	if c.Why != "" {
		fmt.Fprintf(&b, " (%s)", c.Why)
	}
	b.WriteString(". Its tool server does not deduplicate calls, so Baton will not send it again.\n\n")
	c.describe(&b)
	if c.SentAt != "" {
		fmt.Fprintf(&b, "Sent: %s\n", c.SentAt)
	}
	b.WriteString("\nCheck in the tool's own system. Complete this item with what the tool did (for example the ticket or refund id) if it happened, or fail it with a note if it did not.")
	return b.String()
}

func (c CallText) describe(b *strings.Builder) {
	fmt.Fprintf(b, "Tool: %s\nArguments:\n", c.Tool)
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, c.Arguments, "", "  "); err != nil {
		pretty.Reset()
		pretty.Write(c.Arguments)
	}
	b.Write(pretty.Bytes())
	fmt.Fprintf(b, "\nStep: %s (process %s, version %d, run %s)\n", c.StepID, c.Process, c.Version, c.RunID)
	fmt.Fprintf(b, "Agent: %s, attempt %d\n", c.Agent, c.Attempt)
	fmt.Fprintf(b, "Digest: %s\n", c.Digest)
}

// UnknownOutcomeOutput is the output the operators' item on an unknown
// outcome asks for.
func UnknownOutcomeOutput() Fields {
	return Fields{{
		Name: "result", Type: TypeString,
		Description: "What the tool did, as far as you can tell: the ticket number, the refund id",
	}}
}
