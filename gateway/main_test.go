package gateway

import (
	"context"
	"crypto/rand"
	"os"
	"testing"

	"go.temporal.io/sdk/client"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/internal/testing/pgtest"
	"github.com/baton-run/baton/workflows"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

// bundle is a gateway over a fresh database of its own. Its Temporal
// client never connects: the tests that use it reach no run.
type bundle struct {
	ctx    context.Context
	store  *store.Store
	issuer *auth.DevIssuer
	g      *Gateway
}

func setup(t testing.TB, opts *Options) bundle {
	t.Helper()
	return setupWithTemporal(t, opts, "127.0.0.1:1")
}

// setupWithTemporal is setup with the gateway's Temporal client pointed at
// hostPort.
func setupWithTemporal(t testing.TB, opts *Options, hostPort string) bundle {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	issuer, err := auth.NewDevIssuer(key)
	if err != nil {
		t.Fatal(err)
	}
	return bundle{ctx: ctx, store: st, issuer: issuer, g: newGateway(t, st, issuer, key, opts, hostPort)}
}

// newGateway is a gateway over st whose tokens issuer signs with key, its
// Temporal client pointed at hostPort.
func newGateway(t testing.TB, st *store.Store, issuer *auth.DevIssuer, key []byte, opts *Options, hostPort string) *Gateway {
	t.Helper()
	c, err := client.NewLazyClient(client.Options{HostPort: hostPort})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	o := Options{}
	if opts != nil {
		o = *opts
	}
	o.Org, o.BaseURL, o.Secret = "o_test", "http://baton.test", key
	runs, err := workflows.NewClient(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(st, runs, issuer.Verify, &o)
	if err != nil {
		t.Fatal(err)
	}
	return g
}
