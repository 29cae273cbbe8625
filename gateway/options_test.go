package gateway

import (
	"testing"
	"time"
)

// A lease is at least a second: the one check of Options.Lease, which
// baton's --lease uses too. Zero in Options is the default.
func TestCheckLease(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		lease time.Duration
		ok    bool
	}{
		{-time.Second, false},
		{0, false},
		{time.Second - time.Nanosecond, false},
		{time.Second, true},
		{DefaultLease, true},
	} {
		if err := CheckLease(tc.lease); (err == nil) != tc.ok {
			t.Errorf("CheckLease(%v) = %v, want ok %v", tc.lease, err, tc.ok)
		}
	}
	for _, tc := range []struct {
		lease time.Duration
		ok    bool
	}{{0, true}, {time.Second, true}, {500 * time.Millisecond, false}, {-time.Second, false}} {
		o := Options{Lease: tc.lease}
		if err := o.defaults(); (err == nil) != tc.ok {
			t.Errorf("Options{Lease: %v}: %v, want ok %v", tc.lease, err, tc.ok)
		}
		if tc.lease == 0 && o.Lease != DefaultLease {
			t.Errorf("Options{Lease: 0} leases %v, want DefaultLease", o.Lease)
		}
	}
}
