package main

import (
	"net/http"
	"testing"
	"time"

	"github.com/baton-run/baton/gateway"
)

// The gateway's server bounds every phase of a request, and the bounds
// leave a 10 MiB upload over a 256 kbit/s link time to arrive.
func TestHTTPServerTimeouts(t *testing.T) {
	t.Parallel()
	srv := newHTTPServer(http.NotFoundHandler())
	if srv.ReadHeaderTimeout <= 0 || srv.ReadTimeout <= 0 || srv.WriteTimeout <= 0 || srv.IdleTimeout <= 0 {
		t.Fatalf("timeouts: header %v, read %v, write %v, idle %v; want all set",
			srv.ReadHeaderTimeout, srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout)
	}
	if srv.WriteTimeout < srv.ReadTimeout+gateway.CallTimeout {
		t.Errorf("WriteTimeout %v leaves a call that took ReadTimeout %v to arrive less than %v to answer", srv.WriteTimeout, srv.ReadTimeout, gateway.CallTimeout)
	}
	// An upload's deadlines are pushed back by the gateway (see
	// gateway.limitBodies); what it allows must cover the slow link.
	upload := gateway.MaxUploadRequestBytes(10 << 20)
	if need := time.Duration(upload/(32<<10)) * time.Second; gateway.UploadTimeout(10<<20) < need {
		t.Errorf("UploadTimeout %v for %d bytes, want at least %v", gateway.UploadTimeout(10<<20), upload, need)
	}
}
