package interpreter

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/gowebpki/jcs"
)

// canonicalJSON renders the frontmatter tree as RFC 8785 canonical JSON:
// members sorted by their names' UTF-16 code units, strings with only the
// escapes JSON requires, and numbers as IEEE doubles in ECMAScript form
// (jcs.NumberToJSON). That is the hash's rule (spec §6 rule 5); the typed
// model keeps numbers as written. The tree is written directly rather than
// printed and re-read by jcs.Transform; tests and FuzzParse check that the
// two agree byte for byte.
func canonicalJSON(root *fmValue) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(2048)
	if err := writeCanonical(&buf, root); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func writeCanonical(buf *bytes.Buffer, v *fmValue) error {
	switch v.kind {
	case jsonNull:
		buf.WriteString("null")
	case jsonBool:
		buf.WriteString(strconv.FormatBool(v.b))
	case jsonNumber:
		f, err := strconv.ParseFloat(v.str, 64)
		if err != nil {
			return errors.New("number out of range: " + v.str)
		}
		s, err := jcs.NumberToJSON(f)
		if err != nil {
			return err
		}
		buf.WriteString(s)
	case jsonString:
		return writeCanonicalString(buf, v.str)
	case jsonArray:
		buf.WriteByte('[')
		for i, e := range v.arr {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeCanonical(buf, e); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case jsonObject:
		order := make([]int, len(v.members))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(i, j int) int {
			a, b := v.members[i].key, v.members[j].key
			switch {
			case lessUTF16(a, b):
				return -1
			case lessUTF16(b, a):
				return 1
			}
			return 0
		})
		buf.WriteByte('{')
		for i, k := range order {
			if i > 0 {
				buf.WriteByte(',')
			}
			m := &v.members[k]
			if err := writeCanonicalString(buf, m.key); err != nil {
				return err
			}
			buf.WriteByte(':')
			if err := writeCanonical(buf, m.val); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	default:
		return errors.New("not a JSON value")
	}
	return nil
}

// writeCanonicalString writes s as RFC 8785 does: \" \\ \b \f \n \r \t,
// other control characters as \u00xx, everything else as UTF-8.
func writeCanonicalString(buf *bytes.Buffer, s string) error {
	if !utf8.ValidString(s) {
		return errors.New("a string is not valid UTF-8")
	}
	const hex = "0123456789abcdef"
	buf.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"', '\\':
			buf.WriteByte('\\')
			buf.WriteByte(c)
		case '\b':
			buf.WriteString(`\b`)
		case '\f':
			buf.WriteString(`\f`)
		case '\n':
			buf.WriteString(`\n`)
		case '\r':
			buf.WriteString(`\r`)
		case '\t':
			buf.WriteString(`\t`)
		default:
			if c < 0x20 {
				buf.WriteString(`\u00`)
				buf.WriteByte(hex[c>>4])
				buf.WriteByte(hex[c&0xf])
			} else {
				buf.WriteByte(c)
			}
		}
	}
	buf.WriteByte('"')
	return nil
}

// lessUTF16 orders two valid UTF-8 strings by their UTF-16 code units.
func lessUTF16(a, b string) bool {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			a1, a2 := utf16Units(ra)
			b1, b2 := utf16Units(rb)
			if a1 != b1 {
				return a1 < b1
			}
			return a2 < b2
		}
		a, b = a[na:], b[nb:]
	}
	return a == "" && b != ""
}

// utf16Units returns r's UTF-16 code units; the second is 0 for a rune in
// the Basic Multilingual Plane.
func utf16Units(r rune) (uint16, uint16) {
	if r < 0x10000 {
		return uint16(r), 0
	}
	r1, r2 := utf16.EncodeRune(r)
	return uint16(r1), uint16(r2)
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
