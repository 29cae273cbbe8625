package gateway

import (
	"container/list"
	"sync"
)

// versionCacheBytes bounds what a gateway keeps of published versions. A
// deployment of many organizations publishes more versions, of up to
// MaxProcessBytes each, than one gateway should hold for its lifetime; the
// versions runs use now fit many times over.
const versionCacheBytes = 64 << 20

// versionCache keeps the published versions a gateway read, within a
// budget of bytes, evicting the least recently used first. A version
// never changes, so an evicted one is only read again.
type versionCache struct {
	mu      sync.Mutex
	budget  int
	used    int
	order   *list.List // of *cachedVersion, the most recently used first
	entries map[string]*list.Element
}

type cachedVersion struct {
	key  string
	pub  published
	size int
}

func newVersionCache(budget int) *versionCache {
	return &versionCache{budget: budget, order: list.New(), entries: map[string]*list.Element{}}
}

// get returns the version kept under key, if any, as the most recently
// used.
func (c *versionCache) get(key string) (published, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok {
		return published{}, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*cachedVersion).pub, true
}

// put keeps pub under key, counting size bytes for it, and returns what
// is kept: a version another call kept first stays. It evicts the least
// recently used others until the budget holds; the one just kept always
// stays, whatever its size.
func (c *versionCache) put(key string, pub published, size int) published {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[key]; ok {
		c.order.MoveToFront(e)
		return e.Value.(*cachedVersion).pub
	}
	c.entries[key] = c.order.PushFront(&cachedVersion{key: key, pub: pub, size: size})
	c.used += size
	for c.used > c.budget && c.order.Len() > 1 {
		old := c.order.Remove(c.order.Back()).(*cachedVersion)
		delete(c.entries, old.key)
		c.used -= old.size
	}
	return pub
}
