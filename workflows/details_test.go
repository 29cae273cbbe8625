package workflows

import (
	"strings"
	"testing"

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
