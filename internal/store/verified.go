package store

import (
	"container/list"
	"sync"
	"time"
)

// Files verified recently are remembered by [Store.VerifyFiles] so that a
// file named again and again (a retried submit, the same report attached
// to several steps, a pool of callers citing one upload) is not hashed on
// every call. Files never change after upload: the hash check is there to
// notice storage that changed them, and a change is noticed at the latest
// VerifiedFilesTTL after the file was last hashed. Each gateway process
// keeps its own cache of at most VerifiedFilesMax files, least recently
// used first out.
const (
	VerifiedFilesTTL = 5 * time.Minute
	VerifiedFilesMax = 4096
)

// verifiedFiles is a bounded, expiring set of (organization, file id,
// recorded SHA-256) found to match. Safe for concurrent use.
type verifiedFiles struct {
	max int
	ttl time.Duration
	now func() time.Time

	mu    sync.Mutex
	order *list.List // of *verifiedFile, most recently used first
	items map[fileKey]*list.Element
}

type fileKey struct{ org, id string }

type verifiedFile struct {
	key     fileKey
	sha256  []byte
	expires time.Time
}

func newVerifiedFiles(max int, ttl time.Duration) *verifiedFiles {
	return &verifiedFiles{max: max, ttl: ttl, now: time.Now, order: list.New(), items: map[fileKey]*list.Element{}}
}

// get returns the recorded SHA-256 a file was verified against, or nil if
// it was not verified within the TTL.
func (v *verifiedFiles) get(org, id string) []byte {
	v.mu.Lock()
	defer v.mu.Unlock()
	e, ok := v.items[fileKey{org, id}]
	if !ok {
		return nil
	}
	f := e.Value.(*verifiedFile)
	if !v.now().Before(f.expires) {
		v.order.Remove(e)
		delete(v.items, f.key)
		return nil
	}
	v.order.MoveToFront(e)
	return f.sha256
}

// put records that a file's stored bytes hash to sha256, its recorded hash.
func (v *verifiedFiles) put(org, id string, sha256 []byte) {
	v.mu.Lock()
	defer v.mu.Unlock()
	k := fileKey{org, id}
	f := &verifiedFile{key: k, sha256: sha256, expires: v.now().Add(v.ttl)}
	if e, ok := v.items[k]; ok {
		e.Value = f
		v.order.MoveToFront(e)
		return
	}
	v.items[k] = v.order.PushFront(f)
	for v.order.Len() > v.max {
		last := v.order.Back()
		v.order.Remove(last)
		delete(v.items, last.Value.(*verifiedFile).key)
	}
}

// forget drops a file, for one found not to match.
func (v *verifiedFiles) forget(org, id string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if e, ok := v.items[fileKey{org, id}]; ok {
		v.order.Remove(e)
		delete(v.items, fileKey{org, id})
	}
}

func (v *verifiedFiles) len() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.order.Len()
}
