package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// ErrBadFileURL means a file URL's signature does not match: it was forged,
// altered, or made for another file or organization. The gateway answers 403.
var ErrBadFileURL = errors.New("file URL signature does not match: use the url from the latest run data")

// ErrFileURLExpired means a genuine file URL is past its expiry. It wraps
// [ErrBadFileURL], so the gateway answers it with 403 too.
var ErrFileURLExpired = fmt.Errorf("file URL expired: fetch the run again for a fresh url (%w)", ErrBadFileURL)

// DefaultFileURLTTL is how long a file URL stays valid when NewFileURLs is
// given no lifetime.
const DefaultFileURLTTL = 15 * time.Minute

// FileURLs makes and checks the short-lived signed links to uploaded files
// that returned run data carries (spec §5).
type FileURLs struct {
	key  []byte
	base string
	ttl  time.Duration
}

// NewFileURLs returns FileURLs signing with key (at least [KeySize] bytes;
// DeriveKey(master, [PurposeFileURLs]) gives one) and pointing at baseURL,
// the gateway's public http(s) URL. URLs stay valid for ttl; zero means
// [DefaultFileURLTTL].
func NewFileURLs(key []byte, baseURL string, ttl time.Duration) (*FileURLs, error) {
	if len(key) < KeySize {
		return nil, fmt.Errorf("file URL key is %d bytes, want at least %d: use DeriveKey(master, PurposeFileURLs)", len(key), KeySize)
	}
	u, err := url.Parse(baseURL)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("file URL base %q is not an absolute http(s) URL without query: give the gateway's public URL, like https://baton.example.com", baseURL)
	}
	if ttl < 0 {
		return nil, fmt.Errorf("file URL lifetime is %v: give a positive duration, or zero for %v", ttl, DefaultFileURLTTL)
	}
	if ttl == 0 {
		ttl = DefaultFileURLTTL
	}
	return &FileURLs{key: append([]byte(nil), key...), base: strings.TrimSuffix(baseURL, "/"), ttl: ttl}, nil
}

// URL returns <base>/files/<fileID>?exp=<unix seconds>&org=<org>&sig=<mac>,
// valid from now for the configured lifetime, for the file fileID of org.
// The signature covers the organization: a link altered to name another
// does not verify.
func (f *FileURLs) URL(org, fileID string, now time.Time) string {
	exp := strconv.FormatInt(now.Add(f.ttl).Unix(), 10)
	q := url.Values{"exp": {exp}, "org": {org}, "sig": {b64.EncodeToString(f.mac(org, fileID, exp))}}
	return f.base + "/files/" + url.PathEscape(fileID) + "?" + q.Encode()
}

// Check verifies the exp and sig query values of a URL made by
// [FileURLs.URL] for the file fileID of org. It returns [ErrFileURLExpired]
// when the URL is genuine but past its expiry, and [ErrBadFileURL] when it
// is not genuine.
func (f *FileURLs) Check(org, fileID, exp, sig string, now time.Time) error {
	n, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || strconv.FormatInt(n, 10) != exp {
		return ErrBadFileURL
	}
	got, err := b64.DecodeString(sig)
	if err != nil || !hmac.Equal(got, f.mac(org, fileID, exp)) {
		return ErrBadFileURL
	}
	if now.Unix() > n {
		return ErrFileURLExpired
	}
	return nil
}

func (f *FileURLs) mac(org, fileID, exp string) []byte {
	m := hmac.New(sha256.New, f.key)
	m.Write([]byte("baton file url\x00"))
	var buf []byte
	for _, s := range [...]string{org, fileID, exp} {
		buf = binary.AppendUvarint(buf, uint64(len(s)))
		buf = append(buf, s...)
	}
	m.Write(buf)
	return m.Sum(nil)
}
