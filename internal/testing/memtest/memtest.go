// Package memtest measures what a piece of code costs in memory, for tests
// and benchmarks that hold a path to a bound.
package memtest

import (
	"runtime"
	"runtime/metrics"
	"time"
)

// Usage is what one call of [Measure]'s function cost.
type Usage struct {
	// Peak is the most heap held by live and not yet collected objects
	// while the function ran, above what was held before it started.
	Peak uint64
	// Allocated is the bytes allocated while it ran.
	Allocated uint64
}

// Measure runs f once and returns its memory usage. The heap is collected
// first; while f runs, the heap is sampled every 200 µs, so a peak shorter
// than that may be missed. Whatever else runs in the process counts too.
func Measure(f func()) Usage {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	heap := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	base := heap()
	stop, peak := make(chan struct{}), make(chan uint64)
	go func() {
		var p uint64
		t := time.NewTicker(200 * time.Microsecond)
		defer t.Stop()
		for {
			p = max(p, heap())
			select {
			case <-stop:
				peak <- max(p, heap())
				return
			case <-t.C:
			}
		}
	}()
	f()
	close(stop)
	p := <-peak
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	u := Usage{Allocated: after.TotalAlloc - before.TotalAlloc}
	if p > base {
		u.Peak = p - base
	}
	return u
}
