package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// KeySize is the length in bytes of the keys this package creates and derives.
const KeySize = 32

// The purposes [DeriveKey] is used for in Baton. Each yields an unrelated key,
// so a value signed for one purpose never verifies for another.
const (
	PurposeClaimTokens = "claim-tokens"
	PurposeFileURLs    = "file-urls"
	PurposeDevTokens   = "dev-tokens"
)

// DeriveKey derives a [KeySize]-byte key for purpose from master:
// HMAC-SHA256(master, "baton key v1\x00" + purpose). Different purposes give
// independent keys; the master itself is never used to sign anything.
func DeriveKey(master []byte, purpose string) []byte {
	m := hmac.New(sha256.New, master)
	m.Write([]byte("baton key v1\x00"))
	m.Write([]byte(purpose))
	return m.Sum(nil)
}

// LoadOrCreateKey returns the [KeySize]-byte secret stored in the file at
// path, first creating the file with a random key (mode 0600, its folder 0700)
// if it does not exist. Concurrent callers agree on one key: the file appears
// whole or not at all.
func LoadOrCreateKey(path string) ([]byte, error) {
	key, err := readKey(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create folder for key file: %w", err)
	}
	key = make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("generate key: %w", err)
	}
	// Write a temporary file, then link it into place: a link never replaces
	// an existing file, so whoever links first wins and the others read theirs.
	tmp, err := os.CreateTemp(filepath.Dir(path), ".key-*") // mode 0600
	if err != nil {
		return nil, fmt.Errorf("create key file: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(key); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("write key file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("write key file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return nil, fmt.Errorf("write key file: %w", err)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return readKey(path)
		}
		return nil, fmt.Errorf("create key file %s: %w", path, err)
	}
	return key, nil
}

func readKey(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read key file: %w", err)
	}
	if runtime.GOOS != "windows" && st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("key file %s is readable by others (mode %v): run chmod 600 %s", path, st.Mode().Perm(), path)
	}
	key, err := io.ReadAll(io.LimitReader(f, KeySize+1))
	if err != nil {
		return nil, fmt.Errorf("read key file: %w", err)
	}
	if len(key) != KeySize {
		return nil, fmt.Errorf("key file %s does not hold a %d-byte key: delete it to create a new one (tokens signed with the old key stop working)", path, KeySize)
	}
	return key, nil
}
