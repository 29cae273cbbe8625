package workflows

import (
	"fmt"
	"testing"
)

// A run says it answered a requestId under any attempt it kept, and
// notices when an id leaves its window.
func TestSeenAnsweredAnyAttempt(t *testing.T) {
	var s seenSet
	s.add("req-a~2")
	s.add("req-b")
	tests := []struct {
		id   string
		want bool
	}{
		{"req-a", true},
		{"req-a~1", true},
		{"req-a~2", true},
		{"req-b~3", true},
		{"req-c", false},
		{"req-c~1", false},
		{"req-a~x", false},
	}
	for _, tt := range tests {
		if got := s.answeredAnyAttempt(tt.id); got != tt.want {
			t.Errorf("answeredAnyAttempt(%q) = %v, want %v", tt.id, got, tt.want)
		}
	}
	if s.evicted {
		t.Fatal("evicted before the window was full")
	}
	for i := range seenIDs {
		s.add(fmt.Sprintf("fill-%d", i))
	}
	if !s.evicted || s.has("req-a~2") {
		t.Fatalf("a full window kept its oldest id or did not say it evicted one")
	}
}
