package interpreter

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"

	"github.com/gowebpki/jcs"
)

// canonicalJSON renders the frontmatter tree as RFC 8785 canonical JSON.
// RFC 8785 reads every number as an IEEE double; that is the hash's rule
// (spec §6 rule 5), and the typed model keeps the numbers as written.
func canonicalJSON(root *fmValue) ([]byte, error) {
	var buf bytes.Buffer
	fmWriteJSON(&buf, root)
	return jcs.Transform(buf.Bytes())
}

// ContentHash is the content hash of spec §6 rule 5: the lowercase hex
// SHA-256 of the canonical JSON of the frontmatter, one newline, and the
// body exactly as written.
func ContentHash(canonical []byte, body []byte) string {
	h := sha256.New()
	h.Write(canonical)
	h.Write([]byte{'\n'})
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}
