package store_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/baton-run/baton/internal/store"
)

func TestFiles(t *testing.T) {
	t.Parallel()
	b := setup(t)
	content := []byte("%PDF-1.7 report")
	f, err := b.store.PutFile(b.ctx, nil, store.File{Org: org, ID: "f_91a", Name: "report.pdf",
		ContentType: "application/pdf", Bytes: content, CreatedBy: "a_screener"})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(content)
	if f.Size != int64(len(content)) || f.SHA256 != hex.EncodeToString(sum[:]) || f.CreatedAt.IsZero() {
		t.Fatalf("PutFile = %+v", f)
	}

	got, err := b.store.GetFile(b.ctx, org, "f_91a")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes, content) || got.SHA256 != f.SHA256 || got.Name != "report.pdf" || got.ContentType != "application/pdf" {
		t.Fatalf("GetFile = %+v", got)
	}
	stat, err := b.store.StatFile(b.ctx, org, "f_91a")
	if err != nil {
		t.Fatal(err)
	}
	if stat.Bytes != nil || stat.Size != f.Size || stat.SHA256 != f.SHA256 {
		t.Fatalf("StatFile = %+v", stat)
	}

	if _, err := b.store.PutFile(b.ctx, nil, store.File{Org: org, ID: "f_91a", Bytes: []byte("x")}); !errors.Is(err, store.ErrExists) {
		t.Fatalf("second PutFile with the same id: err = %v, want ErrExists", err)
	}
	if _, err := b.store.GetFile(b.ctx, org, "f_000"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetFile(missing): err = %v, want ErrNotFound", err)
	}
	empty, err := b.store.PutFile(b.ctx, nil, store.File{Org: org, ID: "f_empty", Name: "empty.txt", ContentType: "text/plain"})
	if err != nil || empty.Size != 0 || empty.SHA256 != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Fatalf("empty file: %+v, %v", empty, err)
	}
}

// At most one file of an organization has a requestId: a second upload
// under it, whatever its id, is ErrExists, with or without a quota, and
// StatFileByRequest finds the first.
func TestFileRequestIDIsUnique(t *testing.T) {
	t.Parallel()
	b := setup(t)
	first, err := b.store.PutFile(b.ctx, nil, store.File{Org: org, ID: "f_a", Bytes: []byte("a"), CreatedBy: "a_1", RequestID: "r-1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.store.PutFile(b.ctx, nil, store.File{Org: org, ID: "f_b", Bytes: []byte("a"), CreatedBy: "a_1", RequestID: "r-1"}); !errors.Is(err, store.ErrExists) {
		t.Fatalf("a second file of requestId r-1: %v", err)
	}
	quota := store.UploadQuota{Bytes: 1 << 20, Window: time.Hour}
	if _, err := b.store.PutFileWithinQuota(b.ctx, nil, store.File{Org: org, ID: "f_c", Bytes: []byte("a"), CreatedBy: "a_2", RequestID: "r-1"}, quota); !errors.Is(err, store.ErrExists) {
		t.Fatalf("a second file of requestId r-1 within a quota: %v", err)
	}
	got, err := b.store.StatFileByRequest(b.ctx, org, "r-1")
	if err != nil || got.ID != "f_a" || got.SHA256 != first.SHA256 || got.CreatedBy != "a_1" || got.RequestID != "r-1" {
		t.Fatalf("StatFileByRequest = %+v, %v", got, err)
	}
	if _, err := b.store.StatFileByRequest(b.ctx, org, "r-2"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("StatFileByRequest(unknown) = %v", err)
	}
	// Files without a requestId do not collide.
	for _, id := range []string{"f_d", "f_e"} {
		if _, err := b.store.PutFile(b.ctx, nil, store.File{Org: org, ID: id, Bytes: []byte("a")}); err != nil {
			t.Fatal(err)
		}
	}
}
