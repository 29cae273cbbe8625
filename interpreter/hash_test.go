package interpreter

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/gowebpki/jcs"
)

// TestHashFixtures pins every fixture's hash, checks the body is every byte
// after the closing line, that parsing again gives the same hash, and that
// a one-byte change to the body changes it.
func TestHashFixtures(t *testing.T) {
	t.Parallel()
	for _, f := range fixtures(t) {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			p, err := Parse(f.src, &ParseOptions{Offer: withCheck()})
			if err != nil {
				t.Fatal(err)
			}
			if p.Hash != fixtureHashes[f.name] {
				t.Errorf("hash %s, want %s", p.Hash, fixtureHashes[f.name])
			}
			end := bytes.Index(f.src[4:], []byte("\n---\n")) + 4 + len("\n---\n")
			if p.Body != string(f.src[end:]) {
				t.Errorf("body %q, want %q", p.Body, f.src[end:])
			}
			if want := ContentHash(p.Frontmatter, []byte(p.Body)); p.Hash != want {
				t.Errorf("hash %s is not ContentHash of its parts (%s)", p.Hash, want)
			}
			again, err := Parse(append([]byte(nil), f.src...), &ParseOptions{Offer: withCheck()})
			if err != nil || again.Hash != p.Hash || !bytes.Equal(again.Frontmatter, p.Frontmatter) {
				t.Errorf("second parse: %v, hash %s", err, again.Hash)
			}
			changed := append([]byte(nil), f.src...)
			changed[len(changed)-2] ^= 0x01 // a byte of the body
			other, err := Parse(changed, &ParseOptions{Offer: withCheck()})
			if err != nil {
				t.Fatal(err)
			}
			if other.Hash == p.Hash {
				t.Error("a one-byte body change kept the hash")
			}
			if !bytes.Equal(other.Frontmatter, p.Frontmatter) {
				t.Error("a body change changed the frontmatter")
			}
		})
	}
}

// TestHashCanonical: the hash covers the parsed frontmatter, so what YAML
// writes differently but means the same hashes the same, and anything that
// changes the parsed value or the body changes it.
func TestHashCanonical(t *testing.T) {
	t.Parallel()
	const body = "# Demo\n"
	base := "name: demo\ndescription: A demo.\ninputs:\n  n: { type: number, one_of: [17, 2.5] }\nsteps:\n  - id: a\n    agent: Do it.\n  - id: b\n    finish: ok\n"
	hash := func(front, body string) (string, string) {
		t.Helper()
		p, err := Parse([]byte("---\n"+front+"---\n"+body), nil)
		if err != nil {
			t.Fatalf("%q: %v", front, err)
		}
		return p.Hash, string(p.Frontmatter)
	}
	baseHash, canonical := hash(base, body)
	const wantCanonical = `{"description":"A demo.","inputs":{"n":{"one_of":[17,2.5],"type":"number"}},"name":"demo","steps":[{"agent":"Do it.","id":"a"},{"finish":"ok","id":"b"}]}`
	if canonical != wantCanonical {
		t.Errorf("canonical JSON\n got %s\nwant %s", canonical, wantCanonical)
	}
	if want := ContentHash([]byte(wantCanonical), []byte(body)); baseHash != want {
		t.Errorf("hash %s, want %s", baseHash, want)
	}

	same := []struct{ name, front string }{
		{"key order", "description: A demo.\nname: demo\ninputs:\n  n: { one_of: [17, 2.5], type: number }\nsteps:\n  - agent: Do it.\n    id: a\n  - id: b\n    finish: ok\n"},
		{"block and flow styles", "name: demo\ndescription: A demo.\ninputs: {n: {type: number, one_of: [17, 2.5]}}\nsteps: [{id: a, agent: Do it.}, {id: b, finish: ok}]\n"},
		{"quoting", "name: 'demo'\ndescription: \"A demo.\"\ninputs:\n  n: { type: number, one_of: [17, 2.5] }\nsteps:\n  - id: a\n    agent: Do it.\n  - id: \"b\"\n    finish: ok\n"},
		{"number spellings", "name: demo\ndescription: A demo.\ninputs:\n  n: { type: number, one_of: [017, 2.50] }\nsteps:\n  - id: a\n    agent: Do it.\n  - id: b\n    finish: ok\n"},
		{"comments", "# A comment\nname: demo # here\ndescription: A demo.\ninputs:\n  n: { type: number, one_of: [0x11, 25e-1] }\nsteps:\n  - id: a\n    agent: Do it.\n  - id: b\n    finish: ok\n"},
	}
	for _, tc := range same {
		if h, c := hash(tc.front, body); h != baseHash {
			t.Errorf("%s: hash changed; canonical %s", tc.name, c)
		}
	}
	differ := []struct{ name, front, body string }{
		{"a value", strings.Replace(base, "Do it.", "Do it!", 1), body},
		{"a number", strings.Replace(base, "17", "18", 1), body},
		{"step order", "name: demo\ndescription: A demo.\ninputs:\n  n: { type: number, one_of: [17, 2.5] }\nsteps:\n  - id: b\n    agent: Do it.\n    next: a\n  - id: a\n    finish: ok\n", body},
		{"a leading blank line in the body", base, "\n" + body},
		{"a trailing newline", base, strings.TrimSuffix(body, "\n")},
		{"CRLF in the body", base, "# Demo\r\n"},
	}
	for _, tc := range differ {
		p, err := Parse([]byte("---\n"+tc.front+"---\n"+tc.body), nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if p.Hash == baseHash {
			t.Errorf("%s: hash unchanged", tc.name)
		}
	}
}

// TestHashNumbersAsDoubles: RFC 8785 serializes numbers as IEEE doubles, so
// the hash sees 2^53+1 as 2^53; the model keeps the number as written.
func TestHashNumbersAsDoubles(t *testing.T) {
	t.Parallel()
	src := "---\nname: demo\ndescription: D.\ninputs:\n  n: { type: number, one_of: [9007199254740993, 1.0] }\nsteps:\n  - id: a\n    finish: ok\n---\n"
	p, err := Parse([]byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(p.Frontmatter), `"one_of":[9007199254740992,1]`) {
		t.Errorf("canonical %s", p.Frontmatter)
	}
	if got := p.Inputs.Lookup("n").OneOf; len(got) != 2 || got[0] != any(json.Number("9007199254740993")) {
		t.Errorf("one_of %#v", got)
	}
}

// viaTransform is the reference canonical form: the tree printed as JSON and
// canonicalized by jcs.Transform.
func viaTransform(t testing.TB, root *fmValue) []byte {
	var buf bytes.Buffer
	fmWriteJSON(&buf, root)
	out, err := jcs.Transform(buf.Bytes())
	if err != nil {
		t.Fatalf("jcs.Transform(%s): %v", buf.Bytes(), err)
	}
	return out
}

// frontmatterTree parses a file's frontmatter into its tree.
func frontmatterTree(t testing.TB, src []byte) *fmValue {
	doc, issue := splitDocument(src)
	if issue != nil {
		t.Fatal(issue)
	}
	is := &issueList{}
	root := parseFrontmatter(doc, is)
	if len(is.list) > 0 || root == nil {
		t.Fatalf("issues %v", is.list)
	}
	return root
}

// TestCanonicalJSONMatchesTransform checks the direct canonical writer
// against jcs.Transform on the fixtures and on values chosen to stress key
// order, escapes and numbers.
func TestCanonicalJSONMatchesTransform(t *testing.T) {
	t.Parallel()
	srcs := map[string]string{
		"keys":    "---\n\"\\U0001F600\": 1\n\"\\uFFFD\": 2\n\"\\uE000\": 3\nb: 4\nB: 5\n\"\": 6\naa: 7\na: 8\n\"\\u00e9\": 9\n---\n",
		"strings": "---\ns: \"tab\\there \\\"q\\\" back\\\\slash \\b\\f\\r\\n \\x01 \\x1f \\x7f \\u2028 <>& é 😀\"\n---\n",
		"numbers": "---\nn: [0, -0, 1.0, 2.50, 1e21, 1e-7, 123456789012345678901234567890, 9007199254740993, 0.1, 5e-324, 1.7976931348623157e308, 0x7FFFFFFFFFFFFFFF, 0o777, 1e+2, -12.5e-3]\n---\n",
		"nested":  "---\na: {z: [1, {y: null, x: true}], m: false}\n---\n",
	}
	for name, src := range srcs {
		root := frontmatterTree(t, []byte(src))
		got, err := canonicalJSON(root)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want := viaTransform(t, root); !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
	for _, f := range fixtures(t) {
		root := frontmatterTree(t, f.src)
		got, err := canonicalJSON(root)
		if err != nil {
			t.Fatal(err)
		}
		if want := viaTransform(t, root); !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", f.name, got, want)
		}
	}
}

// fmWriteJSON appends the JSON text of v, members in the order written:
// the plain rendering that jcs.Transform canonicalizes in these tests.
func fmWriteJSON(buf *bytes.Buffer, v *fmValue) {
	switch v.kind {
	case jsonNull:
		buf.WriteString("null")
	case jsonBool:
		buf.WriteString(strconv.FormatBool(v.b))
	case jsonNumber:
		buf.WriteString(v.str)
	case jsonString:
		fmWriteString(buf, v.str)
	case jsonArray:
		buf.WriteByte('[')
		for i, e := range v.arr {
			if i > 0 {
				buf.WriteByte(',')
			}
			fmWriteJSON(buf, e)
		}
		buf.WriteByte(']')
	case jsonObject:
		buf.WriteByte('{')
		for i, m := range v.members {
			if i > 0 {
				buf.WriteByte(',')
			}
			fmWriteString(buf, m.key)
			buf.WriteByte(':')
			fmWriteJSON(buf, m.val)
		}
		buf.WriteByte('}')
	}
}

// fmWriteString writes s as a JSON string. Only the characters JSON
// requires are escaped; canonicalization re-escapes it anyway.
func fmWriteString(buf *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	buf.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			buf.WriteByte('\\')
			buf.WriteByte(c)
		case c < 0x20:
			buf.WriteString(`\u00`)
			buf.WriteByte(hex[c>>4])
			buf.WriteByte(hex[c&0xf])
		default:
			buf.WriteByte(c)
		}
	}
	buf.WriteByte('"')
}
