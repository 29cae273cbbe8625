package store_test

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/baton-run/baton/internal/store"
)

func putTestFile(t *testing.T, b bundle, id, content string) store.File {
	t.Helper()
	f, err := b.store.PutFile(b.ctx, nil, store.File{Org: org, ID: id, Name: id + ".txt", ContentType: "text/plain", Bytes: []byte(content), CreatedBy: "a_screener"})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// tamper changes a file's stored bytes behind the store's back, as a
// damaged disk or a hand-edited row would.
func tamper(t *testing.T, b bundle, id, content string) {
	t.Helper()
	if _, err := b.store.Pool().Exec(b.ctx, `UPDATE files SET bytes = $3, size = $4 WHERE org = $1 AND file_id = $2`, org, id, []byte(content), len(content)); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyFiles(t *testing.T) {
	t.Parallel()
	b := setup(t)
	good := putTestFile(t, b, "f_good", "the report")
	bad := putTestFile(t, b, "f_bad", "the invoice")
	putTestFile(t, b, "f_other_org", "x")
	if _, err := b.store.Pool().Exec(b.ctx, `UPDATE files SET org = 'o_other' WHERE file_id = 'f_other_org'`); err != nil {
		t.Fatal(err)
	}
	tamper(t, b, "f_bad", "the forged invoice")

	got, err := b.store.VerifyFiles(b.ctx, org, []string{"f_good", "f_bad", "f_missing", "f_good", "f_other_org"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]store.FileStatus{
		"f_good":      {Found: true, Matches: true, SHA256: good.SHA256},
		"f_bad":       {Found: true, Matches: false, SHA256: bad.SHA256},
		"f_missing":   {},
		"f_other_org": {},
	}
	if len(got) != len(want) {
		t.Errorf("VerifyFiles = %+v, want %d entries", got, len(want))
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s: %+v, want %+v", id, got[id], w)
		}
	}

	if got, err := b.store.VerifyFiles(b.ctx, org, nil); err != nil || len(got) != 0 {
		t.Errorf("VerifyFiles(nil) = %+v, %v", got, err)
	}
}

// A file verified a moment ago is not hashed again while it stays in the
// store's cache; a file whose recorded hash changed is.
func TestVerifyFilesRemembersVerifiedFiles(t *testing.T) {
	t.Parallel()
	b := setup(t)
	putTestFile(t, b, "f_1", "the report")
	if got, err := b.store.VerifyFiles(b.ctx, org, []string{"f_1"}); err != nil || !got["f_1"].Matches {
		t.Fatalf("first VerifyFiles = %+v, %v", got, err)
	}
	tamper(t, b, "f_1", "the forged report")
	got, err := b.store.VerifyFiles(b.ctx, org, []string{"f_1"})
	if err != nil {
		t.Fatal(err)
	}
	if !got["f_1"].Matches {
		t.Errorf("a file verified a moment ago was hashed again: %+v", got["f_1"])
	}

	// A new recorded hash is not the one the cache vouches for.
	sum := sha256.Sum256([]byte("something else"))
	if _, err := b.store.Pool().Exec(b.ctx, `UPDATE files SET sha256 = $2 WHERE file_id = $1`, "f_1", sum[:]); err != nil {
		t.Fatal(err)
	}
	got, err = b.store.VerifyFiles(b.ctx, org, []string{"f_1"})
	if err != nil {
		t.Fatal(err)
	}
	if want := (store.FileStatus{Found: true, SHA256: hex.EncodeToString(sum[:])}); got["f_1"] != want {
		t.Errorf("after the recorded hash changed: %+v, want %+v", got["f_1"], want)
	}
}
