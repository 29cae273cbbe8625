package oauth

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
)

// pkceS256 is the one PKCE method the server accepts (RFC 7636 §4.2).
const pkceS256 = "S256"

// checkChallenge checks the PKCE parameters of an authorization request.
// OAuth 2.1 requires PKCE; "plain" (also what an absent method means) would
// send the verifier itself through the browser, so only S256 is accepted.
func checkChallenge(challenge, method string) *Error {
	if challenge == "" {
		return oauthError("invalid_request", "code_challenge is missing: this server requires PKCE with code_challenge_method=S256")
	}
	if method != pkceS256 {
		if method == "" {
			method = "plain (no code_challenge_method)"
		}
		return oauthError("invalid_request", "code_challenge_method "+method+" is not supported: use S256")
	}
	// An S256 challenge is the unpadded base64url of a SHA-256 digest.
	if raw, err := base64.RawURLEncoding.Strict().DecodeString(challenge); err != nil || len(raw) != sha256.Size {
		return oauthError("invalid_request", "code_challenge is not an S256 challenge: send BASE64URL(SHA256(code_verifier)) without padding")
	}
	return nil
}

// checkVerifier checks a code_verifier (RFC 7636 §4.1: 43 to 128 characters
// of A-Z a-z 0-9 - . _ ~) against the challenge of its code.
func checkVerifier(verifier, challenge string) *Error {
	if verifier == "" {
		return oauthError("invalid_request", "code_verifier is missing: send the PKCE verifier whose S256 challenge the authorization request carried")
	}
	if len(verifier) < 43 || len(verifier) > 128 || !unreserved(verifier) {
		return oauthError("invalid_grant", "code_verifier is not 43 to 128 characters of A-Z, a-z, 0-9, '-', '.', '_' and '~'")
	}
	sum := sha256.Sum256([]byte(verifier))
	got := base64.RawURLEncoding.EncodeToString(sum[:])
	if subtle.ConstantTimeCompare([]byte(got), []byte(challenge)) != 1 {
		return oauthError("invalid_grant", "code_verifier does not match the code_challenge of the authorization request")
	}
	return nil
}

func unreserved(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '.', c == '_', c == '~':
		default:
			return false
		}
	}
	return true
}
