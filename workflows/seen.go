package workflows

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
)

// A run remembers which update ids it answered, beyond the last answers it
// keeps whole (recentAnswers), so that an update id it answered before
// continue-as-new is never applied a second time: its validator refuses it
// as answered before, and the gateway answers from its record of the
// answer. Each id is kept as 8 bytes of its hash, the most recent
// seenIDs of them.

// seenIDs bounds the ids a run remembers: 16384 ids travel through
// continue-as-new in about 175 KB.
const seenIDs = 16384

// answeredBeforeType is the application error type of an update id the
// run answered before and no longer holds the answer of.
const answeredBeforeType = "answered_before"

// ErrAnsweredBefore is returned, wrapped, by the Client for a write whose
// update id the run answered before continue-as-new: the caller answers
// from its own record.
var ErrAnsweredBefore = errors.New("workflows: the run answered this request before and no longer holds its answer")

type seenSet struct {
	order []uint64
	set   map[uint64]bool
	// evicted is set once an id left the window.
	evicted bool
}

func idHash(id string) uint64 {
	h := sha256.Sum256([]byte(id))
	return binary.BigEndian.Uint64(h[:8])
}

func (s *seenSet) add(id string) {
	if s.set == nil {
		s.set = map[uint64]bool{}
	}
	h := idHash(id)
	if s.set[h] {
		return
	}
	s.set[h] = true
	s.order = append(s.order, h)
	if len(s.order) > seenIDs {
		delete(s.set, s.order[0])
		s.order = s.order[1:]
		s.evicted = true
	}
}

func (s *seenSet) has(id string) bool { return s.set[idHash(id)] }

// keptAttempts bounds the attempts of one requestId a run looks for
// (Write.updateID): the gateway skips at most 16 remembered refusals a
// call, and a requestId tried more often than this is never said kept.
const keptAttempts = 64

// answeredAnyAttempt says whether the run answered the requestId of update
// id under any attempt: the id itself, the requestId bare, or
// requestId~n.
func (s *seenSet) answeredAnyAttempt(id string) bool {
	base := id
	if i := strings.LastIndexByte(id, '~'); i > 0 {
		if _, err := strconv.Atoi(id[i+1:]); err == nil {
			base = id[:i]
		}
	}
	if s.has(id) || s.has(base) {
		return true
	}
	for n := 1; n <= keptAttempts; n++ {
		if s.has(base + "~" + strconv.Itoa(n)) {
			return true
		}
	}
	return false
}

// encode packs the ids for continue-as-new.
func (s *seenSet) encode() string {
	b := make([]byte, 8*len(s.order))
	for i, h := range s.order {
		binary.BigEndian.PutUint64(b[8*i:], h)
	}
	return base64.StdEncoding.EncodeToString(b)
}

func decodeSeen(text string) seenSet {
	var s seenSet
	b, err := base64.StdEncoding.DecodeString(text)
	if err != nil {
		return s
	}
	s.set = make(map[uint64]bool, len(b)/8)
	for i := 0; i+8 <= len(b); i += 8 {
		h := binary.BigEndian.Uint64(b[i:])
		if !s.set[h] {
			s.set[h] = true
			s.order = append(s.order, h)
		}
	}
	return s
}
