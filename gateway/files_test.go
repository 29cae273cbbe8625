package gateway

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/baton-run/baton/internal/store"
)

// An uploaded file is served inline only when its type cannot run script
// in the gateway's origin; everything else is a download. Every answer is
// sandboxed and unsniffable.
func TestServeFileOnlyInertTypesInline(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	h := b.g.Handler()
	tests := []struct {
		name, contentType string
		inline            bool
	}{
		{"html", "text/html", false},
		{"html with charset", "text/html; charset=utf-8", false},
		{"html in capitals", "TEXT/HTML", false},
		{"svg", "image/svg+xml", false},
		{"xhtml", "application/xhtml+xml", false},
		{"javascript", "text/javascript", false},
		{"xml", "application/xml", false},
		{"octet stream", "application/octet-stream", false},
		{"not a media type", "text/plain, text/html", false},
		{"empty", "", false},
		{"png", "image/png", true},
		{"jpeg", "image/jpeg", true},
		{"gif", "image/gif", true},
		{"webp", "image/webp", true},
		{"pdf", "application/pdf", true},
		{"plain text", "text/plain; charset=utf-8", true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := "f_" + strings.Repeat("x", i+1)
			content := "<script>alert(document.domain)</script>"
			if _, err := b.store.PutFile(b.ctx, nil, store.File{Org: "o_test", ID: id, Name: `report "final".html`,
				ContentType: tt.contentType, Bytes: []byte(content), CreatedBy: "a_screener"}); err != nil {
				t.Fatal(err)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, b.g.files.URL("o_test", id, timeNow()), nil))
			if w.Code != http.StatusOK {
				t.Fatalf("status %d: %s", w.Code, w.Body.String())
			}
			disp := w.Header().Get("Content-Disposition")
			if want := map[bool]string{true: "inline;", false: "attachment;"}[tt.inline]; !strings.HasPrefix(disp, want) {
				t.Errorf("Content-Disposition = %q, want %s…", disp, want)
			}
			if !strings.Contains(disp, `filename=`) {
				t.Errorf("Content-Disposition = %q names no file", disp)
			}
			if got := w.Header().Get("Content-Security-Policy"); got != "sandbox" {
				t.Errorf("Content-Security-Policy = %q, want sandbox", got)
			}
			if got := w.Header().Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options = %q, want nosniff", got)
			}
			if body, _ := io.ReadAll(w.Body); string(body) != content {
				t.Errorf("body = %q", body)
			}
		})
	}
}
