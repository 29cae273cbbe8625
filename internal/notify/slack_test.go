package notify

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/baton-run/baton/interpreter"
)

// shape is what Slack's documented example shows of one kind of object
// (keyed by its "type", "message" for the top): the keys it has, each
// with its JSON kind, and the keys every instance has.
type shape struct {
	keys     map[string]string
	required map[string]bool
	seen     int
}

func jsonKind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "list"
	case string:
		return "string"
	case bool:
		return "boolean"
	case float64:
		return "number"
	}
	return "null"
}

func objectType(o map[string]any, def string) string {
	if t, ok := o["type"].(string); ok {
		return t
	}
	return def
}

// learn records the shape of every object in v.
func learn(shapes map[string]*shape, v any, def string) {
	switch x := v.(type) {
	case map[string]any:
		typ := objectType(x, def)
		s := shapes[typ]
		if s == nil {
			s = &shape{keys: map[string]string{}, required: map[string]bool{}}
			for k := range x {
				s.required[k] = true
			}
			shapes[typ] = s
		}
		s.seen++
		for k := range s.required {
			if _, ok := x[k]; !ok {
				delete(s.required, k)
			}
		}
		for k, e := range x {
			s.keys[k] = jsonKind(e)
			learn(shapes, e, typ+"."+k)
		}
	case []any:
		for _, e := range x {
			learn(shapes, e, def)
		}
	}
}

// conform lists where v leaves the shapes: an object of a type the
// example has none of, a key it never has, a kind it never has there, a
// key every example has and v lacks.
func conform(shapes map[string]*shape, v any, def, path string) []string {
	var issues []string
	switch x := v.(type) {
	case map[string]any:
		typ := objectType(x, def)
		s := shapes[typ]
		if s == nil {
			return []string{fmt.Sprintf("%s: type %q is not in Slack's example", path, typ)}
		}
		var keys []string
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			kind, ok := s.keys[k]
			switch {
			case !ok:
				issues = append(issues, fmt.Sprintf("%s.%s: %s objects have no such key", path, k, typ))
			case kind != jsonKind(x[k]):
				issues = append(issues, fmt.Sprintf("%s.%s: a %s, Slack's example has a %s", path, k, jsonKind(x[k]), kind))
			default:
				issues = append(issues, conform(shapes, x[k], typ+"."+k, path+"."+k)...)
			}
		}
		for k := range s.required {
			if _, ok := x[k]; !ok {
				issues = append(issues, fmt.Sprintf("%s: lacks %s, which every %s has", path, k, typ))
			}
		}
	case []any:
		for i, e := range x {
			issues = append(issues, conform(shapes, e, def, fmt.Sprintf("%s[%d]", path, i))...)
		}
	}
	return issues
}

// Slack's documented limits of the parts the message uses (Block Kit
// reference: blocks, section block, button element, text object).
func slackLimits(msg map[string]any) []string {
	var issues []string
	blocks, _ := msg["blocks"].([]any)
	if len(blocks) == 0 || len(blocks) > 50 {
		issues = append(issues, fmt.Sprintf("%d blocks, want 1 to 50", len(blocks)))
	}
	for i, b := range blocks {
		bo := b.(map[string]any)
		if t, ok := bo["text"].(map[string]any); ok {
			if n := len([]rune(t["text"].(string))); n < 1 || n > 3000 {
				issues = append(issues, fmt.Sprintf("blocks[%d].text: %d characters, want 1 to 3000", i, n))
			}
		}
		if fs, ok := bo["fields"].([]any); ok {
			if len(fs) > 10 {
				issues = append(issues, fmt.Sprintf("blocks[%d].fields: %d, at most 10", i, len(fs)))
			}
			for j, f := range fs {
				if n := len([]rune(f.(map[string]any)["text"].(string))); n > 2000 {
					issues = append(issues, fmt.Sprintf("blocks[%d].fields[%d]: %d characters, at most 2000", i, j, n))
				}
			}
		}
		if es, ok := bo["elements"].([]any); ok {
			for j, e := range es {
				eo := e.(map[string]any)
				if n := len([]rune(eo["text"].(map[string]any)["text"].(string))); n > 75 {
					issues = append(issues, fmt.Sprintf("blocks[%d].elements[%d].text: %d characters, at most 75", i, j, n))
				}
				if u, _ := eo["url"].(string); len(u) > 3000 || !strings.HasPrefix(u, "http") {
					issues = append(issues, fmt.Sprintf("blocks[%d].elements[%d].url %q", i, j, u))
				}
				if id, _ := eo["action_id"].(string); len(id) > 255 {
					issues = append(issues, fmt.Sprintf("blocks[%d].elements[%d].action_id over 255", i, j))
				}
			}
		}
	}
	return issues
}

func exampleShapes(t *testing.T) map[string]*shape {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "slack-incoming-webhook-blocks.json"))
	if err != nil {
		t.Fatal(err)
	}
	var example map[string]any
	if err := json.Unmarshal(b, &example); err != nil {
		t.Fatal(err)
	}
	shapes := map[string]*shape{}
	learn(shapes, example, "message")
	if issues := conform(shapes, example, "message", "message"); len(issues) > 0 {
		t.Fatalf("the example does not fit its own shape: %v", issues)
	}
	return shapes
}

// roundTrip is msg as Slack reads it: JSON.
func roundTrip(t *testing.T, msg map[string]any) map[string]any {
	t.Helper()
	b, err := json.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func sampleNotice(typ interpreter.NoticeType) *interpreter.Notice {
	due := time.Date(2026, 10, 8, 9, 0, 0, 0, time.UTC)
	n := &interpreter.Notice{
		ID: interpreter.NoticeID("r_1", typ, "item/w_1"), Type: typ, At: time.Date(2026, 10, 6, 9, 0, 0, 0, time.UTC),
		Run:       interpreter.NoticeRun{ID: "r_1", Process: "invoice-approval", Version: 3, Mode: "live", StartedBy: interpreter.Actor{ID: "mira@acme.example", Kind: interpreter.ActorPerson}},
		Operators: "operators",
	}
	switch typ {
	case interpreter.NoticeRunEnded:
		n.Run.Outcome = "approved"
	default:
		n.WorkItem = &interpreter.NoticeItem{ID: "w_1", StepID: "finance_review", Kind: interpreter.ItemApprove,
			AssignedTo: interpreter.Assignee{Group: "finance-approver"}, Due: &due, Title: "Approve only if totalUsd is above 10000 & <= 100000"}
		if typ == interpreter.NoticeWorkDecided {
			n.WorkItem.Decision, n.WorkItem.DecidedBy = "approved", "fin@acme.example"
		}
	}
	return n
}

func link(runID, itemID string) string {
	u := "https://baton.acme.example/inbox/runs/" + runID
	if itemID != "" {
		u += "/items/" + itemID
	}
	return u
}

// The Slack message of every event fits the shape of Slack's documented
// incoming-webhook example and its limits, names the item's title, the
// process, who it is for, and has a button to the inbox item.
func TestSlackMessageFitsSlacksExample(t *testing.T) {
	shapes := exampleShapes(t)
	for _, typ := range []interpreter.NoticeType{interpreter.NoticeWorkOpened, interpreter.NoticeWorkDecided, interpreter.NoticeRunEnded} {
		t.Run(string(typ), func(t *testing.T) {
			msg := roundTrip(t, SlackMessage(NewEvent("o_acme", sampleNotice(typ), link)))
			if issues := append(conform(shapes, msg, "message", "message"), slackLimits(msg)...); len(issues) > 0 {
				t.Fatalf("the message leaves Slack's shape:\n%s\n%v", strings.Join(issues, "\n"), msg)
			}
			var buf strings.Builder
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(msg); err != nil {
				t.Fatal(err)
			}
			s := buf.String()
			for _, want := range []string{"invoice-approval v3", `"url":"https://baton.acme.example/inbox/runs/r_1`} {
				if !strings.Contains(s, want) {
					t.Errorf("the message lacks %s: %s", want, s)
				}
			}
			if typ != interpreter.NoticeRunEnded {
				for _, want := range []string{"Approve only if totalUsd is above 10000 &amp; &lt;= 100000", "group finance-approver", "/items/w_1"} {
					if !strings.Contains(s, want) {
						t.Errorf("the message lacks %s: %s", want, s)
					}
				}
			}
		})
	}
}

// The shape check fails a message that leaves Slack's shape.
func TestSlackShapeCheckFailsABadMessage(t *testing.T) {
	shapes := exampleShapes(t)
	msg := roundTrip(t, SlackMessage(NewEvent("o_acme", sampleNotice(interpreter.NoticeWorkOpened), link)))
	blocks := msg["blocks"].([]any)
	blocks[0].(map[string]any)["text"].(map[string]any)["markdown"] = true
	blocks[2].(map[string]any)["elements"].([]any)[0].(map[string]any)["text"] = "Open"
	blocks = append(blocks, map[string]any{"type": "header", "text": map[string]any{"type": "plain_text", "text": "x"}})
	msg["blocks"] = blocks
	issues := conform(shapes, msg, "message", "message")
	if len(issues) != 3 {
		t.Fatalf("issues %v, want 3", issues)
	}
}
