package interpreter

import "testing"

// BenchmarkParse parses, validates and hashes each conformance fixture.
func BenchmarkParse(b *testing.B) {
	offer := withCheck()
	for _, f := range fixtures(b) {
		b.Run(f.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(f.src)))
			for b.Loop() {
				if _, err := Parse(f.src, &ParseOptions{Folder: f.name, Offer: offer}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
