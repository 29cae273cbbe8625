package auth

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// maxTokenBytes bounds the size of a bearer token we are willing to decode.
const maxTokenBytes = 16 << 10

// b64 is unpadded base64url that refuses non-canonical encodings, so that no
// two strings decode to the same bytes.
var b64 = base64.RawURLEncoding.Strict()

// jws is a compact JWS split into its parts. Nothing in it is trusted until
// the signature over signingInput has been checked.
type jws struct {
	header       jwsHeader
	payload      []byte
	signingInput string
	signature    []byte
}

type jwsHeader struct {
	Alg  string          `json:"alg"`
	Kid  string          `json:"kid"`
	Crit json.RawMessage `json:"crit"`
}

// parseJWS splits and decodes a compact JWS. It refuses tokens that are too
// long, malformed, unsigned (alg "none") or that name critical extensions.
func parseJWS(token string) (*jws, error) {
	if len(token) > maxTokenBytes {
		return nil, fmt.Errorf("%w: token is longer than %d bytes", ErrInvalidToken, maxTokenBytes)
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, fmt.Errorf("%w: not a compact JWS (want header.payload.signature)", ErrInvalidToken)
	}
	rawHeader, err := b64.DecodeString(parts[0])
	if err != nil {
		return nil, fmt.Errorf("%w: header is not base64url", ErrInvalidToken)
	}
	var j jws
	if err := json.Unmarshal(rawHeader, &j.header); err != nil {
		return nil, fmt.Errorf("%w: header is not a JSON object", ErrInvalidToken)
	}
	if j.header.Alg == "" || strings.EqualFold(j.header.Alg, "none") {
		return nil, fmt.Errorf("%w: unsigned tokens (alg %q) are refused", ErrInvalidToken, j.header.Alg)
	}
	if j.header.Crit != nil {
		return nil, fmt.Errorf("%w: header names critical extensions this server does not understand", ErrInvalidToken)
	}
	if j.payload, err = b64.DecodeString(parts[1]); err != nil {
		return nil, fmt.Errorf("%w: payload is not base64url", ErrInvalidToken)
	}
	if j.signature, err = b64.DecodeString(parts[2]); err != nil {
		return nil, fmt.Errorf("%w: signature is not base64url", ErrInvalidToken)
	}
	j.signingInput = parts[0] + "." + parts[1]
	return &j, nil
}

// claims is a decoded JWT claim set; numbers stay json.Number.
type claims map[string]any

func decodeClaims(payload []byte) (claims, error) {
	d := json.NewDecoder(bytes.NewReader(payload))
	d.UseNumber()
	var c claims
	if err := d.Decode(&c); err != nil || c == nil {
		return nil, fmt.Errorf("%w: claims are not a JSON object", ErrInvalidToken)
	}
	if d.More() {
		return nil, fmt.Errorf("%w: claims are followed by trailing data", ErrInvalidToken)
	}
	return c, nil
}

// str returns a string claim; ok is false when the claim is absent.
func (c claims) str(name string) (s string, ok bool, err error) {
	v, present := c[name]
	if !present || v == nil {
		return "", false, nil
	}
	s, isStr := v.(string)
	if !isStr {
		return "", false, fmt.Errorf("%w: claim %q is not a string", ErrInvalidToken, name)
	}
	return s, true, nil
}

// strings returns a claim that is a string or an array of strings.
func (c claims) stringList(name string) ([]string, error) {
	switch v := c[name].(type) {
	case nil:
		return nil, nil
	case string:
		return []string{v}, nil
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("%w: claim %q holds a value that is not a string", ErrInvalidToken, name)
			}
			out = append(out, s)
		}
		return out, nil
	default:
		return nil, fmt.Errorf("%w: claim %q is neither a string nor an array of strings", ErrInvalidToken, name)
	}
}

// date returns a NumericDate claim (seconds since the epoch, possibly
// fractional); ok is false when the claim is absent.
func (c claims) date(name string) (t time.Time, ok bool, err error) {
	v, present := c[name]
	if !present || v == nil {
		return time.Time{}, false, nil
	}
	n, isNum := v.(json.Number)
	if !isNum {
		return time.Time{}, false, fmt.Errorf("%w: claim %q is not a number", ErrInvalidToken, name)
	}
	f, err := n.Float64()
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > 1<<40 {
		return time.Time{}, false, fmt.Errorf("%w: claim %q is not a valid date", ErrInvalidToken, name)
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)).UTC(), true, nil
}

// checkTimes checks exp (required) and nbf (optional) against now, allowing
// clockSkew either way, and returns the expiry.
func (c claims) checkTimes(now time.Time) (time.Time, error) {
	exp, ok, err := c.date("exp")
	if err != nil {
		return time.Time{}, err
	}
	if !ok {
		return time.Time{}, fmt.Errorf("%w: token has no exp claim; ask the issuer for tokens that expire", ErrInvalidToken)
	}
	if !now.Before(exp.Add(clockSkew)) {
		return time.Time{}, fmt.Errorf("%w: token expired at %s; get a new token", ErrInvalidToken, exp.Format(time.RFC3339))
	}
	nbf, ok, err := c.date("nbf")
	if err != nil {
		return time.Time{}, err
	}
	if ok && now.Add(clockSkew).Before(nbf) {
		return time.Time{}, fmt.Errorf("%w: token is not valid before %s; check the clocks", ErrInvalidToken, nbf.Format(time.RFC3339))
	}
	return exp, nil
}

// checkIssuer checks that iss equals want.
func (c claims) checkIssuer(want string) error {
	iss, _, err := c.str("iss")
	if err != nil {
		return err
	}
	if iss != want {
		return fmt.Errorf("%w: token was issued by %q, this server trusts %q", ErrInvalidToken, iss, want)
	}
	return nil
}

// checkAudience checks that aud, a string or an array of strings, names want.
func (c claims) checkAudience(want string) error {
	aud, err := c.stringList("aud")
	if err != nil {
		return err
	}
	if !slices.Contains(aud, want) {
		return fmt.Errorf("%w: token is not meant for this server (audience %q); ask the issuer for a token with audience %q", ErrInvalidToken, aud, want)
	}
	return nil
}

// checkScopes refuses a token that does not grant every scope of want, in
// its scope claim (space separated) or scp claim (an array or a string).
func (c claims) checkScopes(want []string) error {
	if len(want) == 0 {
		return nil
	}
	var granted []string
	if s, ok := c["scope"].(string); ok {
		granted = append(granted, strings.Fields(s)...)
	}
	switch scp := c["scp"].(type) {
	case string:
		granted = append(granted, strings.Fields(scp)...)
	case []any:
		for _, v := range scp {
			if s, ok := v.(string); ok {
				granted = append(granted, s)
			}
		}
	}
	for _, w := range want {
		if !slices.Contains(granted, w) {
			return fmt.Errorf("%w: the token does not grant scope %q", ErrInvalidToken, w)
		}
	}
	return nil
}
