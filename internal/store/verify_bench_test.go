package store

import (
	"context"
	"crypto/rand"
	"fmt"
	"testing"

	"github.com/baton-run/baton/internal/testing/pgtest"
)

// BenchmarkVerifyFiles verifies 50 files of 256 KiB in one round trip:
// hashed in PostgreSQL every time (the cache emptied before each call), and
// remembered from the call before.
func BenchmarkVerifyFiles(b *testing.B) {
	ctx := context.Background()
	s, err := Open(ctx, pgtest.NewDatabase(b))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	ids := make([]string, 50)
	for i := range ids {
		data := make([]byte, 256<<10)
		_, _ = rand.Read(data)
		ids[i] = fmt.Sprintf("f_%03d", i)
		if _, err := s.PutFile(ctx, nil, File{Org: "o_test", ID: ids[i], Bytes: data, CreatedBy: "a"}); err != nil {
			b.Fatal(err)
		}
	}
	verify := func(b *testing.B) {
		got, err := s.VerifyFiles(ctx, "o_test", ids)
		if err != nil || len(got) != len(ids) || !got[ids[0]].Matches {
			b.Fatal(got, err)
		}
	}
	b.Run("hashed in the database", func(b *testing.B) {
		for b.Loop() {
			s.verified = newVerifiedFiles(VerifiedFilesMax, VerifiedFilesTTL)
			verify(b)
		}
	})
	b.Run("remembered", func(b *testing.B) {
		verify(b)
		for b.Loop() {
			verify(b)
		}
	})
}
