package workflows

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/baton-run/baton/interpreter"
)

// Caller-supplied text in a run's Temporal UI details stays inside its code
// span: a backtick run in an input or the starter's id cannot close the
// span and turn the rest into markdown (links, images, emphasis).
func TestStaticDetailsKeepInputsInCodeSpans(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "` plain `"},
		{"a`b", "`` a`b ``"},
		{"``[x](https://evil.example)``", "``` ``[x](https://evil.example)`` ```"},
		{"two\nlines", "` two lines `"},
	}
	for _, tt := range tests {
		if got := codeSpan(tt.in); got != tt.want {
			t.Errorf("codeSpan(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}

	in := Input{Start: interpreter.Start{
		Process: &interpreter.Process{Name: "p", Hash: "sha256:ab"},
		Version: 1, Mode: "live",
		Starter: interpreter.Actor{ID: "a`b@example.com", Kind: interpreter.ActorPerson},
		Inputs:  interpreter.Values{"note": "`![img](https://evil.example/x.png)`\n# heading"},
	}}
	got := staticDetails(in)
	for _, want := range []string{
		"`` a`b@example.com ``",
		"`` {\"note\":\"`![img](https://evil.example/x.png)`\\n# heading\"} ``",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("details\n%s\nlack %s", got, want)
		}
	}
	if strings.Count(got, "\n") != 4 {
		t.Errorf("details have %d line breaks, want the template's 4:\n%s", strings.Count(got, "\n"), got)
	}
}

// A run's details show its inputs up to detailsInputBytes, cut between
// characters, and say how much there is: the inputs are in the start's
// input already, and Temporal bounds details to 20,000 bytes where it
// checks them.
func TestStaticDetailsShowTheFirstOfLargeInputs(t *testing.T) {
	in := Input{Start: interpreter.Start{
		Process: &interpreter.Process{Name: "p", Hash: "sha256:ab"},
		Version: 1, Mode: "live",
		Starter: interpreter.Actor{ID: "mira@example.com", Kind: interpreter.ActorPerson},
		Inputs:  interpreter.Values{"page": strings.Repeat("é", 150_000)}, // 300 KB
	}}
	got := staticDetails(in)
	if len(got) > detailsInputBytes+500 || len(got) > 20_000 {
		t.Fatalf("details of 300 KB of inputs are %d bytes", len(got))
	}
	if !utf8.ValidString(got) {
		t.Error("the inputs were cut inside a character")
	}
	if !strings.Contains(got, "of 300011 bytes; get_run has them all)") || !strings.Contains(got, "Inputs: ` {\"page\":\"éé") {
		t.Errorf("details:\n%.300s\n…%s", got, got[len(got)-80:])
	}
	in.Inputs = interpreter.Values{"page": strings.Repeat("x", detailsInputBytes-20)}
	if got := staticDetails(in); strings.Contains(got, "get_run has them all") || !strings.Contains(got, strings.Repeat("x", detailsInputBytes-20)+"\"} `") {
		t.Errorf("inputs under the bound were cut:\n…%s", got[len(got)-80:])
	}
}
