package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrBadClaimToken means a claim token was not made by this server's key or
// was altered. The gateway answers `invalid` (spec §4.3): a token that does
// not verify at all is not `stale`.
var ErrBadClaimToken = errors.New("claim token does not verify: pass the token exactly as claim or renew returned it")

// claimTokenVersion is the first byte of every claim token payload.
const claimTokenVersion = 1

// ClaimTokens makes and checks the tokens `claim` and `renew` return (spec §6
// rule 2). A token binds an organization, run, step and lease id under an
// HMAC-SHA256 of the server's key, so it cannot be guessed or forged, and a
// token for one lease never passes for another. It holds no secret and no
// expiry: whether its lease is still current is the run's business.
type ClaimTokens struct {
	key []byte
}

// NewClaimTokens returns ClaimTokens signing with key, which must be at least
// [KeySize] bytes; DeriveKey(master, [PurposeClaimTokens]) gives one.
func NewClaimTokens(key []byte) (*ClaimTokens, error) {
	if len(key) < KeySize {
		return nil, fmt.Errorf("claim token key is %d bytes, want at least %d: use DeriveKey(master, PurposeClaimTokens)", len(key), KeySize)
	}
	return &ClaimTokens{key: append([]byte(nil), key...)}, nil
}

// Sign returns the token for a lease: base64url of the encoded values
// followed by their MAC.
func (c *ClaimTokens) Sign(org, runID, stepID, leaseID string) string {
	payload := []byte{claimTokenVersion}
	for _, s := range [...]string{org, runID, stepID, leaseID} {
		payload = binary.AppendUvarint(payload, uint64(len(s)))
		payload = append(payload, s...)
	}
	return b64.EncodeToString(append(payload, c.mac(payload)...))
}

// Verify returns the values a token made by [ClaimTokens.Sign] binds, or an
// error wrapping [ErrBadClaimToken].
func (c *ClaimTokens) Verify(token string) (org, runID, stepID, leaseID string, err error) {
	if len(token) > maxTokenBytes {
		return "", "", "", "", ErrBadClaimToken
	}
	raw, err := b64.DecodeString(token)
	if err != nil || len(raw) <= sha256.Size {
		return "", "", "", "", ErrBadClaimToken
	}
	payload, sum := raw[:len(raw)-sha256.Size], raw[len(raw)-sha256.Size:]
	if !hmac.Equal(sum, c.mac(payload)) {
		return "", "", "", "", ErrBadClaimToken
	}
	if payload[0] != claimTokenVersion {
		return "", "", "", "", ErrBadClaimToken
	}
	var vals [4]string
	rest := payload[1:]
	for i := range vals {
		n, w := binary.Uvarint(rest)
		if w <= 0 || n > uint64(len(rest)-w) {
			return "", "", "", "", ErrBadClaimToken
		}
		vals[i] = string(rest[w : w+int(n)])
		rest = rest[w+int(n):]
	}
	if len(rest) != 0 {
		return "", "", "", "", ErrBadClaimToken
	}
	return vals[0], vals[1], vals[2], vals[3], nil
}

func (c *ClaimTokens) mac(payload []byte) []byte {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte("baton claim token\x00"))
	m.Write(payload)
	return m.Sum(nil)
}
