package gateway

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

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

// A file id carries random bits: another member who knows or guesses an
// upload's requestId cannot derive the id to attach it. The same content
// under two requestIds is two files; a replay of a requestId answers the
// same id, even once its idempotency record is gone. The uploader is
// recorded.
func TestUploadIDsAreNotDerivable(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	upload := func(reqID, content string) map[string]any {
		t.Helper()
		raw, _ := json.Marshal(map[string]any{"fileName": "r.txt", "contentType": "text/plain",
			"contentBase64": base64.StdEncoding.EncodeToString([]byte(content)), "requestId": reqID})
		data, err := b.g.Call(b.ctx, testAgent, "upload", raw)
		if err != nil {
			t.Fatalf("upload %s: %v", reqID, err)
		}
		var out map[string]any
		if err := json.Unmarshal(data, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	first, second := upload("u-1", "same bytes"), upload("u-2", "same bytes")
	id, _ := first["id"].(string)
	if id == second["id"] || first["sha256"] != second["sha256"] {
		t.Fatalf("two uploads of the same bytes: %v and %v", first, second)
	}
	// The derivation of old: the organization and the requestId alone.
	h := sha256.Sum256([]byte("o_test\x00f_\x00u-1"))
	if id == "f_"+hex.EncodeToString(h[:10]) || !strings.HasPrefix(id, "f_") || len(id) < len("f_")+32 {
		t.Fatalf("file id %q is derivable from the requestId or too short", id)
	}
	if again := upload("u-1", "same bytes"); again["id"] != id {
		t.Fatalf("a replay answered %v, first %v", again, first)
	}
	// With the idempotency record gone, the stored file still answers.
	if _, err := b.store.DeleteRequestsBefore(b.ctx, nil, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if again := upload("u-1", "same bytes"); again["id"] != id {
		t.Fatalf("a replay past its record answered %v, first %v", again, first)
	}
	raw, _ := json.Marshal(map[string]any{"fileName": "r.txt", "contentType": "text/plain",
		"contentBase64": base64.StdEncoding.EncodeToString([]byte("other bytes")), "requestId": "u-1"})
	if _, err := b.g.Call(b.ctx, testAgent, "upload", raw); err == nil || !strings.Contains(err.Error(), "already used") {
		t.Fatalf("the requestId with other bytes: %v", err)
	}
	f, err := b.store.StatFile(b.ctx, "o_test", id)
	if err != nil || f.CreatedBy != testAgent.ID || f.RequestID != "u-1" {
		t.Fatalf("stored file %+v, %v", f, err)
	}
}
