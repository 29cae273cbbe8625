package store

import (
	"bytes"
	"fmt"
	"testing"
	"time"
)

func TestVerifiedFilesExpireAndStayBounded(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_000_000, 0)
	v := newVerifiedFiles(3, time.Minute)
	v.now = func() time.Time { return now }
	sum := func(i int) []byte { return bytes.Repeat([]byte{byte(i)}, 32) }

	v.put("o", "f_1", sum(1))
	if got := v.get("o", "f_1"); !bytes.Equal(got, sum(1)) {
		t.Fatalf("get after put = %x", got)
	}
	if got := v.get("other", "f_1"); got != nil {
		t.Errorf("another organization's file: %x", got)
	}
	now = now.Add(time.Minute)
	if got := v.get("o", "f_1"); got != nil {
		t.Errorf("an entry a TTL old is still served: %x", got)
	}

	for i := range 5 {
		v.put("o", fmt.Sprintf("f_%d", i), sum(i))
	}
	v.get("o", "f_2") // most recently used now
	v.put("o", "f_9", sum(9))
	if n := v.len(); n != 3 {
		t.Errorf("%d entries, want at most 3", n)
	}
	for id, want := range map[string]bool{"f_2": true, "f_4": true, "f_9": true, "f_3": false, "f_0": false} {
		if got := v.get("o", id) != nil; got != want {
			t.Errorf("%s cached = %v, want %v", id, got, want)
		}
	}
	v.forget("o", "f_9")
	if v.get("o", "f_9") != nil {
		t.Error("a forgotten entry is still served")
	}
}
