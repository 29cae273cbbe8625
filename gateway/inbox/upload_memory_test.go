package inbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/baton-run/baton/gateway"
	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/internal/testing/memtest"
	"github.com/baton-run/baton/internal/testing/pgtest"
	"github.com/baton-run/baton/workflows"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

// A 10 MiB file attached to a decision in the inbox is uploaded through
// the real gateway (its Temporal is never reached: the decide after it
// answers retry once its CallWait is up). The peak heap while the form is served and the bytes
// allocated are logged (go test ./gateway/inbox -run
// TestUploadMemoryInInbox -v).
func TestUploadMemoryInInbox(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	c, err := client.NewLazyClient(client.Options{HostPort: "127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	runs, err := workflows.NewClient(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	key := make([]byte, 32)
	rand.Read(key)
	issuer, err := auth.NewDevIssuer(key)
	if err != nil {
		t.Fatal(err)
	}
	g, err := gateway.New(st, runs, issuer.Verify, &gateway.Options{Org: "o_test", Secret: key, CallWait: 15 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	in, err := New(g, &Options{DevSignIn: true, Secret: key})
	if err != nil {
		t.Fatal(err)
	}
	h := in.Handler()
	rec := httptest.NewRecorder()
	if err := in.sign.startSession(rec, auth.Identity{ID: "mira@example.com", Kind: auth.KindPerson}, time.Hour, time.Now()); err != nil {
		t.Fatal(err)
	}
	cookies := rec.Result().Cookies()
	probe := httptest.NewRequest(http.MethodGet, "/", nil)
	for _, ck := range cookies {
		probe.AddCookie(ck)
	}
	csrf := in.sign.csrf(in.sign.session(probe, time.Now()).SID)

	data := make([]byte, 10<<20)
	rand.Read(data)
	form := func(reqID string, file []byte) (*bytes.Buffer, string) {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		for k, v := range map[string]string{"csrf": csrf, "requestId": reqID, "decision": "approve", "snapshot": "s"} {
			mw.WriteField(k, v)
		}
		fw, _ := mw.CreateFormFile("evidence.file", "scan.bin")
		fw.Write(file)
		mw.Close()
		return &body, mw.FormDataContentType()
	}
	post := func(body *bytes.Buffer, ctype string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/inbox/runs/r_1/items/w_1", body)
		r.Header.Set("Content-Type", ctype)
		for _, ck := range cookies {
			r.AddCookie(ck)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	post(form("warm-up", data[:1<<10]))
	body, ctype := form("scan-1", data)
	var w *httptest.ResponseRecorder
	u := memtest.Measure(func() { w = post(body, ctype) })
	if f, err := st.StatFileByRequest(ctx, "o_test", "scan-1-file-0"); err != nil || f.Size != 10<<20 {
		t.Fatalf("after the form (status %d: %.300s): file %v; want the 10 MiB upload stored", w.Code, w.Body.String(), err)
	}
	t.Logf("10 MiB upload in the inbox: peak heap %.1f MiB above the start, %.1f MiB allocated",
		float64(u.Peak)/(1<<20), float64(u.Allocated)/(1<<20))
	// 134 MiB when the file is encoded straight into the arguments; 380
	// MiB when it was read whole, encoded, marshalled and canonicalized.
	// The peak depends on when the collector runs and is only logged.
	if u.Allocated > 250<<20 {
		t.Errorf("a 10 MiB upload in the inbox allocated %.1f MiB, over 250 MiB: is the file copied on its way again?", float64(u.Allocated)/(1<<20))
	}
}
