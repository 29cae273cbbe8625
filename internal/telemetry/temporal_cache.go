package telemetry

import (
	"hash/maphash"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"go.temporal.io/sdk/client"
)

// maxTaggedHandlers bounds how many tagged handlers a cachedHandler tree
// keeps. The SDK's tags (namespace, task queue, workflow and activity
// type, operation, …) take few values, so a worker uses some dozens; past
// the bound, WithTags returns uncached handlers, which still record.
const maxTaggedHandlers = 4096

// cachedHandler is a client.MetricsHandler that keeps what the handler it
// wraps gives out: the handler WithTags returns for each set of tags, and
// each counter, gauge and timer by name. The Temporal SDK asks for them
// again on every task, poll and call, with the same few sets of tags, and
// the OpenTelemetry handler builds (sorts and hashes) a new attribute set
// for every WithTags and looks the instrument up again for every Counter:
// half of what the SDK's metrics cost a worker under load.
type cachedHandler struct {
	h      client.MetricsHandler
	tagged sync.Map // tagsHash → []*taggedHandler, in the order stored
	mu     sync.Mutex
	count  *atomic.Int64 // tagged handlers in the whole tree

	counters sync.Map // name → client.MetricsCounter
	gauges   sync.Map // name → client.MetricsGauge
	timers   sync.Map // name → client.MetricsTimer
}

// taggedHandler is the handler for one set of tags.
type taggedHandler struct {
	tags map[string]string // a copy: the caller's map may change
	h    *cachedHandler
}

var _ client.MetricsHandler = (*cachedHandler)(nil)

func newCachedHandler(h client.MetricsHandler) *cachedHandler {
	return &cachedHandler{h: h, count: new(atomic.Int64)}
}

func (c *cachedHandler) WithTags(tags map[string]string) client.MetricsHandler {
	key := tagsHash(tags)
	if v, ok := c.tagged.Load(key); ok {
		for _, t := range v.([]*taggedHandler) {
			if maps.Equal(t.tags, tags) {
				return t.h
			}
		}
	}
	if c.count.Load() >= maxTaggedHandlers {
		return c.h.WithTags(tags)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var list []*taggedHandler
	if v, ok := c.tagged.Load(key); ok {
		list = v.([]*taggedHandler)
		for _, t := range list {
			if maps.Equal(t.tags, tags) {
				return t.h
			}
		}
	}
	t := &taggedHandler{tags: maps.Clone(tags), h: &cachedHandler{h: c.h.WithTags(tags), count: c.count}}
	// A new slice: readers may be ranging over the one stored.
	c.tagged.Store(key, append(slices.Clip(list), t))
	c.count.Add(1)
	return t.h
}

func (c *cachedHandler) Counter(name string) client.MetricsCounter {
	return kept(&c.counters, name, c.h.Counter)
}

func (c *cachedHandler) Gauge(name string) client.MetricsGauge {
	return kept(&c.gauges, name, c.h.Gauge)
}

func (c *cachedHandler) Timer(name string) client.MetricsTimer {
	return kept(&c.timers, name, c.h.Timer)
}

// kept returns the instrument named name in m, made by make the first
// time.
func kept[T any](m *sync.Map, name string, make func(string) T) T {
	if v, ok := m.Load(name); ok {
		return v.(T)
	}
	v, _ := m.LoadOrStore(name, make(name))
	return v.(T)
}

// Unwrap returns the handler c wraps, for the SDK's helpers that look for
// the OpenTelemetry handler underneath.
func (c *cachedHandler) Unwrap() client.MetricsHandler { return c.h }

// tagsSeed seeds tagsHash for this process.
var tagsSeed = maphash.MakeSeed()

// tagsHash hashes a set of tags the same whatever the map's order: the
// sum of each tag's hash. Equal sets hash alike; WithTags compares the
// sets of equal hashes.
func tagsHash(tags map[string]string) uint64 {
	var sum uint64
	for k, v := range tags {
		var h maphash.Hash
		h.SetSeed(tagsSeed)
		h.WriteString(k)
		h.WriteByte(0)
		h.WriteString(v)
		sum += h.Sum64()
	}
	return sum
}
