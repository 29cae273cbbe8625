package store

import (
	"context"
	"encoding/json"
	"fmt"
)

// A write's requestId is recorded by its run, in the transaction that
// publishes the write. The gateway asks the record only when the run
// cannot answer for itself (its workflow closed, or it answered the
// requestId before it continued as new), when the run refused, and when
// it did not answer in time; and once, after a replayed start, to set the
// record to what the run answered. Each time the question is the same one,
// what the record says of this call's requestId, and Recall answers it in
// one call, doing first what the run's answer asks of the record.

// Said is what the record says of a requestId, for one call.
type Said int

const (
	// SaidNone: no call holds the requestId, or the record binds it to
	// nothing the call must heed (this call's own record without an
	// answer, another's refused or reserved by a gateway).
	SaidNone Said = iota
	// SaidSame: the requestId was this call's (the same digest), answered
	// with Recalled.Answer.
	SaidSame
	// SaidOther: the requestId is another call's: answered, or held by a
	// run for the answer to come.
	SaidOther
)

func (s Said) String() string {
	switch s {
	case SaidSame:
		return "same"
	case SaidOther:
		return "other"
	}
	return "none"
}

// RecallKind is what a call's run answered, and so what Recall does to the
// record before it reads it.
type RecallKind int

const (
	// RecallRead changes nothing: the run refused, or its workflow is not
	// running or no longer holds the requestId's answer; or the run has not
	// been asked yet.
	RecallRead RecallKind = iota
	// RecallRefused counts a refusal the run gave at Recall.Attempt and
	// that Temporal remembers under that attempt's update id
	// (CountRefusal).
	RecallRefused
	// RecallUnanswered reserves the requestId for the call, whose write may
	// still apply (ReserveRequest). A requestId reserved for another call
	// already, answered or not, is SaidOther.
	RecallUnanswered
	// RecallAnswered sets the answer of the call's record to the one its
	// run answered now, Recall.Result (ReplaceAnswer). The record is not
	// read: Recall says SaidNone.
	RecallAnswered
	// RecallDisowned drops the answer the call's record holds: the run
	// refused the call and said it never answered it under any attempt,
	// so the answer is one the run never kept (its workflow task was
	// lost). The record is not read: Recall says SaidNone.
	RecallDisowned
)

// Recall is one call's question to the record of its requestId.
type Recall struct {
	// Request is the call: organization, requestId, tool and digest; and,
	// for RecallAnswered, the answer in Result.
	Request
	// Kind is what the call's run answered.
	Kind RecallKind
	// Attempt is the attempt the run refused, for RecallRefused.
	Attempt int
	// RunID, for RecallRead, is a run whose state in the read model
	// Recalled.RunState tells, read in the same round trip.
	RunID string
}

// Recalled is what the record says of a call's requestId.
type Recalled struct {
	Said Said
	// Answer is the call's first answer, for SaidSame.
	Answer json.RawMessage
	// Attempt is the attempt to run the call as next, after RecallRefused;
	// Ahead is set when the record counted it already, so that the refusal
	// was an earlier call's, remembered.
	Attempt int
	Ahead   bool
	// RunState is the state of run Recall.RunID in the organization's read
	// model, "" when it has no such run.
	RunState string
}

// sqlRecallRead reads a requestId's record and a run's state, either or
// both absent.
const sqlRecallRead = `
SELECT coalesce(q.digest, ''), q.result, coalesce(q.refused, false), coalesce(q.run_id, ''), coalesce(r.state, '')
FROM (VALUES (1)) AS one (x)
LEFT JOIN requests q ON q.org = $1 AND q.request_id = $2
LEFT JOIN runs r ON r.org = $1 AND r.run_id = $3`

// Recall does what c.Kind asks of the record of c's requestId and tells
// what the record says of c: none, same (with the first answer) or other.
func (s *Store) Recall(ctx context.Context, c Recall) (Recalled, error) {
	if err := c.check(); err != nil {
		return Recalled{}, err
	}
	switch c.Kind {
	case RecallRefused:
		stored, ahead, err := s.countRefusal(ctx, nil, c.Request, c.Attempt)
		if err != nil {
			return Recalled{}, err
		}
		out := stored.said(c.Digest)
		out.Attempt, out.Ahead = stored.Attempt, ahead
		return out, nil
	case RecallUnanswered:
		stored, created, err := s.ReserveRequest(ctx, nil, c.Request)
		if err != nil {
			return Recalled{}, err
		}
		if !created && stored.Digest != c.Digest {
			return Recalled{Said: SaidOther}, nil
		}
		return stored.said(c.Digest), nil
	case RecallAnswered:
		return Recalled{}, s.ReplaceAnswer(ctx, nil, c.Request)
	case RecallDisowned:
		return Recalled{}, s.DropAnswer(ctx, nil, c.Request)
	}
	var stored Request
	var state string
	err := s.pool.QueryRow(ctx, sqlRecallRead, c.Org, c.RequestID, c.RunID).
		Scan(&stored.Digest, &stored.Result, &stored.Refused, &stored.RunID, &state)
	if err != nil {
		return Recalled{}, fmt.Errorf("store: recall request %s: %w", c.RequestID, err)
	}
	out := stored.said(c.Digest)
	out.RunState = state
	return out, nil
}

// said is what record r says of the call with digest: the same call's
// answer, another call's answer or hold, or none.
func (r Request) said(digest string) Recalled {
	switch {
	case r.Digest == "":
		return Recalled{}
	case r.Digest == digest && r.Result != nil:
		return Recalled{Said: SaidSame, Answer: r.Result}
	case r.Digest != digest && (r.Result != nil || (r.RunID != "" && !r.Refused)):
		return Recalled{Said: SaidOther}
	}
	return Recalled{}
}
