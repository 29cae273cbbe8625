package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/internal/testing/pgtest"
)

// Two `baton migrate` started at once against an empty database: each
// migration is applied once, both exit 0 at the latest version, and a
// third finds nothing to do.
func TestMigrateTwoAtOnce(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDatabase(t)
	ms, err := store.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	outs := make([]string, 2)
	var wg sync.WaitGroup
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, out, errOut := baton("migrate", "--database-url", url)
			if code != 0 {
				t.Errorf("baton migrate: exit %d: %s", code, errOut)
			}
			outs[i] = out
		}()
	}
	wg.Wait()
	want := fmt.Sprintf("Schema at version %d\n", len(ms))
	all := outs[0] + outs[1]
	for _, m := range ms {
		if n := strings.Count(all, "Applied "+m.Name+"\n"); n != 1 {
			t.Errorf("%s applied %d times:\n%s", m.Name, n, all)
		}
	}
	if !strings.HasSuffix(outs[0], want) || !strings.HasSuffix(outs[1], want) {
		t.Errorf("want both to end with %q:\n%s", want, all)
	}
	if out := batonOK(t, "migrate", "--database-url", url); out != want {
		t.Errorf("a third baton migrate printed %q, want %q", out, want)
	}
	st, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if n, err := st.PendingMigrations(context.Background()); n != 0 || err != nil {
		t.Errorf("PendingMigrations = %d, %v after baton migrate", n, err)
	}
	if code, _, errOut := baton("migrate"); code != 2 || !strings.Contains(errOut, "--database-url") {
		t.Errorf("baton migrate without a database: exit %d %q", code, errOut)
	}
}
