package gateway

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/interpreter"
)

// BenchmarkCheckEvidence verifies 50 file refs of 256 KiB, the case issue
// 13 measured, the way the gateway used to (each file loaded and hashed
// here, one query per ref) and the way it does now (one query, hashed in
// PostgreSQL, then remembered), and the 5,000-item list.
func BenchmarkCheckEvidence(b *testing.B) {
	bb := setup(b, nil)
	ev := make([]interpreter.Evidence, 50)
	for i := range ev {
		data := make([]byte, 256<<10)
		_, _ = rand.Read(data)
		id := fmt.Sprintf("f_%03d", i)
		if _, err := bb.store.PutFile(bb.ctx, nil, store.File{Org: "o_test", ID: id, Name: id, ContentType: "application/pdf", Bytes: data, CreatedBy: "a_screener"}); err != nil {
			b.Fatal(err)
		}
		ev[i] = interpreter.Evidence{Kind: "file", Ref: id}
	}

	b.Run("load and hash each ref", func(b *testing.B) {
		for b.Loop() {
			for _, e := range ev {
				f, err := bb.store.GetFile(bb.ctx, "o_test", e.Ref)
				if err != nil {
					b.Fatal(err)
				}
				if sum := sha256.Sum256(f.Bytes); hex.EncodeToString(sum[:]) != f.SHA256 {
					b.Fatal("mismatch")
				}
			}
		}
	})
	b.Run("one round trip", func(b *testing.B) {
		for b.Loop() {
			checks, err := bb.g.checkEvidence(bb.ctx, bb.g.opts.Org, ev)
			if err != nil || len(checks) != len(ev) {
				b.Fatal(checks, err)
			}
		}
	})
	var many []interpreter.Evidence
	for range 100 {
		many = append(many, ev...)
	}
	b.Run("5000 items", func(b *testing.B) {
		for b.Loop() {
			if _, err := bb.g.checkEvidence(bb.ctx, bb.g.opts.Org, many); err == nil {
				b.Fatal("5000 items accepted")
			}
		}
	})
}
