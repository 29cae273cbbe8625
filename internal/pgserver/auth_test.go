package pgserver_test

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/baton-run/baton/internal/pgserver"
	"github.com/baton-run/baton/internal/testing/pgtest"
)

// refused asserts that connecting to u fails on its password.
func refused(t *testing.T, u, what string) {
	t.Helper()
	c, err := pgx.Connect(context.Background(), u)
	if err == nil {
		c.Close(context.Background())
		t.Fatalf("%s: connected to %s", what, u)
	}
	if !strings.Contains(err.Error(), "password") {
		t.Fatalf("%s: %v, want a password refusal", what, err)
	}
}

// withPassword returns u with another password, or none.
func withPassword(t *testing.T, u, password string) string {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	if password == "" {
		p.User = url.User(pgserver.User)
	} else {
		p.User = url.UserPassword(pgserver.User, password)
	}
	return p.String()
}

// The server trusts no connection: over TCP and over its unix socket a
// connection needs the generated password, which the data folder keeps in
// a file only its owner reads.
func TestServerNeedsItsPassword(t *testing.T) {
	t.Parallel()
	srv := pgtest.Shared(t)
	if srv.Password() == "" || !strings.Contains(srv.URL(), ":"+srv.Password()+"@") {
		t.Fatalf("URL %s carries no password", srv.URL())
	}
	connect(t, srv.URL())
	refused(t, withPassword(t, srv.URL(), ""), "TCP without a password")
	refused(t, withPassword(t, srv.URL(), "guess"), "TCP with another password")
	sock := url.URL{Scheme: "postgres", User: url.User(pgserver.User), Path: "/postgres",
		RawQuery: url.Values{"host": {srv.SocketDir()}, "port": {strconv.Itoa(srv.Port())}, "sslmode": {"disable"}}.Encode()}
	refused(t, sock.String(), "the unix socket without a password")
	fi, err := os.Stat(filepath.Join(srv.DataDir(), pgserver.PasswordFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("password file: %v, %v", fi, err)
	}
	if got, err := pgserver.ReadPassword(srv.DataDir()); err != nil || got != srv.Password() {
		t.Fatalf("ReadPassword = %q, %v", got, err)
	}
}

// A cluster made before passwords (trusting every local connection) gets
// a password and stops trusting on its next start, its data kept.
func TestTrustingClusterGetsAPassword(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(pgtest.DataDir(t), "pg")
	srv, err := pgserver.Start(ctx, &pgserver.Options{DataDir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	c := connect(t, srv.URL())
	if _, err := c.Exec(ctx, "CREATE TABLE kept (x int); INSERT INTO kept VALUES (7)"); err != nil {
		t.Fatal(err)
	}
	c.Close(ctx)
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	// What initdb --auth=trust wrote, and no password file.
	hba := "local all all trust\nhost all all 127.0.0.1/32 trust\nhost all all ::1/128 trust\n"
	if err := os.WriteFile(filepath.Join(dir, "pg_hba.conf"), []byte(hba), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, pgserver.PasswordFile)); err != nil {
		t.Fatal(err)
	}
	srv, err = pgserver.Start(ctx, &pgserver.Options{DataDir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	refused(t, withPassword(t, srv.URL(), ""), "TCP without a password after the upgrade")
	var x int
	if err := connect(t, srv.URL()).QueryRow(ctx, "SELECT x FROM kept").Scan(&x); err != nil || x != 7 {
		t.Fatalf("kept = %d, %v", x, err)
	}
}
