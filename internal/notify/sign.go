package notify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// SignatureHeader is the header a webhook channel signs its posts in:
//
//	Baton-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body">
//
// the scheme Stripe and others use. The receiver computes the HMAC with
// the channel's secret over the timestamp, a dot and the raw body, compares
// it in constant time, and refuses a timestamp too far from its clock.
const SignatureHeader = "Baton-Signature"

// DefaultTolerance is how far from the receiver's clock Verify accepts a
// signature's time.
const DefaultTolerance = 5 * time.Minute

// Sign is the Baton-Signature header of body sent at t with secret.
func Sign(secret []byte, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + mac(secret, ts, body)
}

func mac(secret []byte, ts string, body []byte) string {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte(ts))
	h.Write([]byte("."))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// ErrSignature is wrapped by every refusal of Verify.
var ErrSignature = errors.New("webhook signature refused")

// Verify checks a Baton-Signature header against body and secret: one of
// its v1 signatures matches, and its time is within tolerance of now
// (DefaultTolerance when 0). A receiver calls it on the raw body, before
// parsing it.
func Verify(secret []byte, header string, body []byte, now time.Time, tolerance time.Duration) error {
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	var ts string
	var sigs []string
	for _, part := range strings.Split(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		switch {
		case !ok:
		case k == "t":
			ts = v
		case k == "v1":
			sigs = append(sigs, v)
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 {
		return fmt.Errorf("%w: the header has no t=<unix seconds> or no v1=<hex>", ErrSignature)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: signed at %s, more than %s from now", ErrSignature, time.Unix(sec, 0).UTC().Format(time.RFC3339), tolerance)
	}
	want := mac(secret, ts, body)
	for _, s := range sigs {
		if hmac.Equal([]byte(s), []byte(want)) {
			return nil
		}
	}
	return fmt.Errorf("%w: no v1 signature matches the body", ErrSignature)
}
