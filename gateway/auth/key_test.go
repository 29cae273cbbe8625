package auth

import (
	"bytes"
	"path/filepath"
	"sync"
	"testing"
)

func TestDeriveKey(t *testing.T) {
	t.Parallel()
	master := []byte("master secret")
	seen := map[string]string{}
	for _, purpose := range []string{PurposeClaimTokens, PurposeFileURLs, PurposeDevTokens} {
		k := DeriveKey(master, purpose)
		if len(k) != KeySize {
			t.Fatalf("DeriveKey(%q) is %d bytes, want %d", purpose, len(k), KeySize)
		}
		if !bytes.Equal(k, DeriveKey(master, purpose)) {
			t.Errorf("DeriveKey(%q) is not deterministic", purpose)
		}
		if p, dup := seen[string(k)]; dup {
			t.Errorf("purposes %q and %q derive the same key", p, purpose)
		}
		seen[string(k)] = purpose
	}
	if bytes.Equal(DeriveKey(master, PurposeFileURLs), DeriveKey([]byte("other"), PurposeFileURLs)) {
		t.Error("different masters derive the same key")
	}
}

func TestLoadOrCreateKeyConcurrent(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "nested", "master.key")
	const n = 8
	keys := make([][]byte, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { keys[i], errs[i] = LoadOrCreateKey(path) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("caller %d: %v", i, errs[i])
		}
		if !bytes.Equal(keys[i], keys[0]) {
			t.Fatalf("caller %d got another key", i)
		}
	}
	matches, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".key-*"))
	if len(matches) != 0 {
		t.Errorf("temporary files left behind: %v", matches)
	}
}
