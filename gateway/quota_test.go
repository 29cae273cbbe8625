package gateway

import (
	"bytes"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/baton-run/baton/gateway/auth"
)

// An identity that used up its upload quota is refused with retry, naming
// the quota; nothing is stored, and other identities are not affected.
func TestUploadQuota(t *testing.T) {
	t.Parallel()
	b := setup(t, &Options{UploadQuota: UploadQuota{Bytes: 1000, Window: time.Hour}})
	srv := httptest.NewServer(b.g.Handler())
	t.Cleanup(srv.Close)
	upload := func(id auth.Identity, n int, requestID string) envelopeReply {
		t.Helper()
		resp, err := b.post(t, srv.URL, id, strings.NewReader(toolCall(`{"name":"upload","arguments":`+uploadArgs(bytes.Repeat([]byte("x"), n), requestID)+`}`)))
		if err != nil {
			t.Fatal(err)
		}
		return callResult(t, resp)
	}
	if r := upload(testAgent, 600, "q1"); !r.OK {
		t.Fatalf("first upload: %+v", r.Error)
	}
	r := upload(testAgent, 600, "q2")
	if r.OK || r.Error.Code != "retry" || len(r.Error.Issues) != 1 || r.Error.Issues[0] != "contentBase64: over the upload quota of 1000 bytes per 1h0m0s" {
		t.Fatalf("upload past the quota: %+v", r.Error)
	}
	t.Log(r.Error.Message)
	if r := upload(testAgent, 600, "q1"); !r.OK {
		t.Errorf("a replay of the first upload: %+v", r.Error)
	}
	if r := upload(auth.Identity{ID: "a_other", Kind: auth.KindAgent}, 600, "q3"); !r.OK {
		t.Errorf("another identity: %+v", r.Error)
	}
	if r := upload(testAgent, 400, "q4"); !r.OK {
		t.Errorf("up to the quota: %+v", r.Error)
	}
}
