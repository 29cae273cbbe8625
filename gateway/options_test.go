package gateway

import (
	"strings"
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

// A size, a count or a lifetime below its minimum is refused rather than
// served: a negative MaxUploadBytes would refuse every upload, a negative
// FileURLTTL would mint links already expired. Zero is the default.
func TestOptionsRefuseValuesBelowTheirMinimum(t *testing.T) {
	t.Parallel()
	for name, o := range map[string]Options{
		"MaxUploadBytes":         {MaxUploadBytes: -1},
		"RunDataBytes":           {RunDataBytes: -1},
		"FileURLTTL":             {FileURLTTL: -time.Minute},
		"MaxRequestsPerIdentity": {MaxRequestsPerIdentity: -1},
		"WritesPerRun":           {WritesPerRun: -1},
		"MaxChildren":            {MaxChildren: -1},
	} {
		if err := o.defaults(); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("Options{%s below its minimum}: %v, want an error naming it", name, err)
		}
	}
	var o Options
	if err := o.defaults(); err != nil {
		t.Fatalf("zero Options: %v", err)
	}
	if o.MaxUploadBytes != DefaultMaxUploadBytes || o.FileURLTTL != 15*time.Minute || o.RunDataBytes < 1 {
		t.Errorf("zero Options took %d, %v, %d; want the defaults", o.MaxUploadBytes, o.FileURLTTL, o.RunDataBytes)
	}
}
