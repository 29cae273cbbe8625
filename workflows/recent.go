package workflows

// The answers a run carries through continue-as-new, for update ids
// Temporal forgets there (Continued.Recent), are its newest: at most
// recentAnswers of them and recentAnswerBytes in all. The input of
// continue-as-new is one payload, which Temporal refuses past 2 MiB, and a
// run view can be a few hundred KiB (run data, body and work items), so a
// count alone would not bound it. An answer left out is still recorded
// beside the read model, where the gateway replays a requestId from.
const (
	recentAnswers     = 64
	recentAnswerBytes = 256 << 10
)

// keepRecent returns the newest answers of recent that fit the bounds,
// oldest first.
func keepRecent(recent []Answer) []Answer {
	n, size := 0, 0
	for i := len(recent) - 1; i >= 0 && n < recentAnswers; i-- {
		size += answerSize(recent[i])
		if size > recentAnswerBytes {
			break
		}
		n++
	}
	return recent[len(recent)-n:]
}

// answerSize is about what an answer takes in the continue-as-new input.
func answerSize(a Answer) int {
	return len(a.UpdateID) + len(a.Result.Digest) + len(a.Result.Value) + 64
}
