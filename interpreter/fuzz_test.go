package interpreter

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/gowebpki/jcs"
)

// FuzzParse feeds Parse arbitrary bytes and mutated fixtures. Parse must
// never panic, must refuse with issues that say something, and must accept
// only with a hash that it gives again for the same bytes.
func FuzzParse(f *testing.F) {
	for _, fx := range fixtures(f) {
		f.Add(fx.src)
		f.Add(fx.src[:len(fx.src)/2])
		f.Add(bytes.Replace(fx.src, []byte("  - id: "), []byte("  - id: &a "), 1))
		f.Add(bytes.Replace(fx.src, []byte("next: "), []byte("next: *a "), 1))
		f.Add(bytes.ReplaceAll(fx.src, []byte("    "), []byte("\t")))
		f.Add(bytes.ReplaceAll(fx.src, []byte("\n"), []byte("\r\n")))
	}
	for _, s := range []string{
		"",
		"---",
		"---\n---\n",
		"---\n- a\n---\n",
		"---\nname: x\nname: y\n---\n",
		"---\n? [a]\n: b\n---\n",
		"---\na: !!binary aGk=\nb: .inf\nc: 1e999\n---\n",
		"---\nname: a\n--- b\n---\n",
		"---\n{\n---\n",
		"---\nsteps: [{id: a, parallel: [a, b]}, {id: b, next: join}]\n---\n",
	} {
		f.Add([]byte(s))
	}
	offer := withCheck()
	f.Fuzz(func(t *testing.T, src []byte) {
		p, err := Parse(src, &ParseOptions{Offer: offer})
		if err != nil {
			var pe *ProcessError
			if !errors.As(err, &pe) || len(pe.Issues) == 0 {
				t.Fatalf("refusal without issues: %v", err)
			}
			// YAML counts a lone carriage return as a line break too, and
			// so do most editors.
			lines := bytes.Count(src, []byte("\n")) + bytes.Count(src, []byte("\r")) - bytes.Count(src, []byte("\r\n")) + 1
			for _, is := range pe.Issues {
				if is.Message == "" || is.Line < 0 || is.Column < 0 || is.Line > lines {
					t.Fatalf("bad issue %+v in a file of %d lines", is, lines)
				}
			}
			_, again := Parse(src, &ParseOptions{Offer: offer})
			if !reflect.DeepEqual(err, again) {
				t.Fatalf("refusal not deterministic:\n%v\n%v", err, again)
			}
			return
		}
		if len(p.Hash) != 64 {
			t.Fatalf("hash %q", p.Hash)
		}
		if _, err := hex.DecodeString(p.Hash); err != nil {
			t.Fatalf("hash %q: %v", p.Hash, err)
		}
		if !json.Valid(p.Frontmatter) {
			t.Fatalf("frontmatter is not JSON: %s", p.Frontmatter)
		}
		if want := viaTransform(t, frontmatterTree(t, src)); !bytes.Equal(p.Frontmatter, want) {
			t.Fatalf("canonical JSON differs from jcs.Transform:\n got %s\nwant %s", p.Frontmatter, want)
		}
		if !bytes.HasSuffix(src, []byte(p.Body)) {
			t.Fatalf("body %q is not the end of the file", p.Body)
		}
		if p.Hash != ContentHash(p.Frontmatter, []byte(p.Body)) {
			t.Fatal("hash is not the content hash of its parts")
		}
		if len(p.Steps) == 0 || p.Name == "" {
			t.Fatalf("accepted an empty process: %+v", p)
		}
		again, err := Parse(src, &ParseOptions{Offer: offer})
		if err != nil || again.Hash != p.Hash {
			t.Fatalf("second parse: %v, %s != %s", err, again.Hash, p.Hash)
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("model does not marshal: %v", err)
		}
		var back Process
		if err := json.Unmarshal(b, &back); err != nil || back.Body != p.Body || back.Hash != p.Hash {
			t.Fatalf("model does not survive JSON: %v", err)
		}
		if again, err := jcs.Transform(back.Frontmatter); err != nil || !bytes.Equal(again, p.Frontmatter) {
			t.Fatalf("frontmatter after JSON: %s, %v", again, err)
		}
	})
}
