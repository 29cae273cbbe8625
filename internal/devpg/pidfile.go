package devpg

import (
	"context"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/baton-run/baton/internal/pgserver"
)

// The lines of postmaster.pid, which a running PostgreSQL keeps in its
// data folder (PostgreSQL's pidfile.h; 1-based).
const (
	pidLinePort       = 4
	pidLineSocketDir  = 5
	pidLineListenAddr = 6
	pidLineStatus     = 8
)

// running returns the URL of the server running on the cluster in dir, as
// its postmaster.pid describes it, with the cluster's password, once a
// connection there succeeds. A missing or stale file, a server not ready,
// or a cluster without a password file gives false.
func running(ctx context.Context, dir string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(dir, "postmaster.pid"))
	if err != nil {
		return "", false
	}
	password, err := pgserver.ReadPassword(dir)
	if err != nil {
		return "", false
	}
	u, ok := pidFileURL(string(b), password)
	if !ok {
		return "", false
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, err := pgconn.Connect(ctx, u)
	if err != nil {
		return "", false
	}
	_ = c.Close(context.Background())
	return u, true
}

// pidFileURL reads a postmaster.pid: the server's URL for the "postgres"
// database with password, over TCP when it listens on an address, else
// over its unix socket. ok is false unless the server says it is ready.
func pidFileURL(pid, password string) (string, bool) {
	lines := strings.Split(pid, "\n")
	line := func(n int) string {
		if n > len(lines) {
			return ""
		}
		return strings.TrimSpace(lines[n-1])
	}
	if line(pidLineStatus) != "ready" {
		return "", false
	}
	port, err := strconv.Atoi(line(pidLinePort))
	if err != nil || port <= 0 || port > 65535 {
		return "", false
	}
	u := url.URL{Scheme: "postgres", User: url.UserPassword(pgserver.User, password), Path: "/postgres"}
	q := url.Values{"sslmode": {"disable"}}
	switch host := line(pidLineListenAddr); host {
	case "":
		sock := line(pidLineSocketDir)
		if sock == "" {
			return "", false
		}
		q.Set("host", sock)
		q.Set("port", strconv.Itoa(port))
	case "*", "0.0.0.0":
		u.Host = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	case "::":
		u.Host = net.JoinHostPort("::1", strconv.Itoa(port))
	default:
		u.Host = net.JoinHostPort(host, strconv.Itoa(port))
	}
	u.RawQuery = q.Encode()
	return u.String(), true
}
