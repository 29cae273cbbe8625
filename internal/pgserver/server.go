// Package pgserver starts a private PostgreSQL server from the system's
// binaries (initdb and postgres, PostgreSQL 15 or later).
//
// Start runs initdb into a data folder (a temporary one, or a persistent one
// that later starts reuse), then postgres listening on a loopback TCP port
// only, with its unix sockets in a private temporary folder. No connection is
// trusted, on TCP or the socket: the superuser has a generated password, kept
// in the data folder (PasswordFile, mode 0600) and carried by URL, so another
// local user cannot connect as the superuser. PostgreSQL refuses to run as
// root; when the current process is root the server runs as the `postgres`
// system user that the Debian and RPM packages create.
//
// `baton dev` runs its server through internal/devpg; tests run theirs
// through internal/testing/pgtest, one per test binary.
package pgserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Options configures Start. A nil *Options means all defaults.
type Options struct {
	// DataDir is the PostgreSQL data folder. Default "": a temporary folder,
	// removed by Stop, with durability turned off (fsync=off) for speed.
	// A non-empty DataDir is created and initialized when it holds no
	// cluster yet, reused as is when it does, kept by Stop, and runs with
	// PostgreSQL's default durability.
	DataDir string
	// Port is the loopback TCP port to listen on. Default 0: a free port.
	Port int
	// BinDir is the folder holding initdb and postgres. Default "": the
	// folder of `postgres` on PATH, else the newest /usr/lib/postgresql/*/bin
	// (Debian), else /usr/pgsql-*/bin (RPM).
	BinDir string
	// StartTimeout bounds how long Start waits for the server to accept
	// connections. Default 60s.
	StartTimeout time.Duration
	// Log receives the server's log output. Default nil: kept in memory
	// (the last 64 KiB) and quoted in errors.
	Log io.Writer
	// NoSync runs a server on a persistent DataDir without durability, as
	// one on a temporary folder runs (fsync=off and the rest), for tests
	// that stop and start a server on the same data: a clean stop still
	// writes everything out. Default false.
	NoSync bool
}

// ErrBinariesNotFound is returned by Start when initdb or postgres cannot be
// found.
var ErrBinariesNotFound = errors.New("pgserver: PostgreSQL server binaries (initdb, postgres) not found; install postgresql-15 (Debian/Ubuntu: apt-get install postgresql-15) or set Options.BinDir")

// User is the database superuser the server is initialized with. Every
// connection needs its password (Server.Password, ReadPassword).
const User = "postgres"

// PasswordFile is the file in the data folder holding User's password, one
// line of hex, readable by its owner only.
const PasswordFile = "baton-password"

// hba is the pg_hba.conf of every cluster: a password on every connection,
// over the unix socket and loopback TCP alike.
const hba = `# Written by Baton: every connection needs the password in ` + PasswordFile + `.
local all all scram-sha-256
host all all 127.0.0.1/32 scram-sha-256
host all all ::1/128 scram-sha-256
`

// Server is a running private PostgreSQL server.
type Server struct {
	port     int
	password string
	dataDir  string
	runDir   string // temporary: sockets, and the data folder when temporary
	tempData bool
	noSync   bool // durability off: tempData or Options.NoSync
	cmd      *exec.Cmd
	log      *tailBuffer
	exited   chan struct{} // closed when the postgres process has exited
	waitErr  error         // set before exited is closed

	stopOnce sync.Once
	stopErr  error
}

// Start initializes (when needed) and starts a PostgreSQL server, and waits
// until it accepts connections. ctx bounds the start only; the server runs
// until Stop.
func Start(ctx context.Context, opts *Options) (*Server, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Port < 0 || o.Port > 65535 {
		return nil, fmt.Errorf("pgserver: Options.Port %d out of range 0–65535", o.Port)
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = 60 * time.Second
	}
	if o.StartTimeout < 0 {
		return nil, fmt.Errorf("pgserver: Options.StartTimeout %v must be positive", o.StartTimeout)
	}
	binDir, err := findBinDir(o.BinDir)
	if err != nil {
		return nil, err
	}
	cred, err := serverCredential()
	if err != nil {
		return nil, err
	}

	runDir, err := os.MkdirTemp("", "baton-pg-")
	if err != nil {
		return nil, fmt.Errorf("pgserver: create temporary folder: %w", err)
	}
	s := &Server{runDir: runDir, log: &tailBuffer{max: 64 << 10}}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(runDir)
		}
	}()
	if err := chownTo(runDir, cred); err != nil {
		return nil, err
	}

	s.noSync = o.NoSync
	if o.DataDir == "" {
		s.tempData, s.noSync = true, true
		s.dataDir = filepath.Join(runDir, "data")
	} else {
		s.dataDir, err = filepath.Abs(o.DataDir)
		if err != nil {
			return nil, fmt.Errorf("pgserver: data folder %q: %w", o.DataDir, err)
		}
	}
	if err := s.initdb(ctx, binDir, cred); err != nil {
		return nil, err
	}

	var out io.Writer = s.log
	if o.Log != nil {
		out = io.MultiWriter(s.log, o.Log)
	}
	ctx, cancel := context.WithTimeout(ctx, o.StartTimeout)
	defer cancel()
	for attempt := 0; ; attempt++ {
		port := o.Port
		if port == 0 {
			if port, err = freePort(); err != nil {
				return nil, err
			}
		}
		err = s.start(ctx, binDir, cred, port, out)
		if err == nil {
			break
		}
		// A free port can be taken between choosing and binding it.
		if o.Port == 0 && attempt < 3 && strings.Contains(s.log.String(), "could not bind") {
			continue
		}
		return nil, err
	}
	ok = true
	return s, nil
}

// initdb creates the cluster unless the data folder already holds one,
// with a new password. A cluster without a password file (made when the
// server trusted local connections) gets one, and stops trusting.
func (s *Server) initdb(ctx context.Context, binDir string, cred *syscall.Credential) error {
	if _, err := os.Stat(filepath.Join(s.dataDir, "PG_VERSION")); err == nil {
		if cred != nil {
			if err := checkOwner(s.dataDir, cred); err != nil {
				return err
			}
		}
		s.password, err = ReadPassword(s.dataDir)
		if errors.Is(err, os.ErrNotExist) {
			return s.setPassword(ctx, binDir, cred)
		}
		return err
	}
	if err := os.MkdirAll(s.dataDir, 0o700); err != nil {
		return fmt.Errorf("pgserver: create data folder: %w", err)
	}
	if err := chownTo(s.dataDir, cred); err != nil {
		return err
	}
	s.password = newPassword()
	pwFile := filepath.Join(s.runDir, "initdb-password")
	if err := writeOwned(pwFile, s.password+"\n", cred); err != nil {
		return err
	}
	defer os.Remove(pwFile)
	args := []string{
		"-D", s.dataDir, "-U", User, "--auth=scram-sha-256", "--pwfile=" + pwFile,
		"--encoding=UTF8", "--locale=C", "--no-instructions",
	}
	if s.tempData {
		args = append(args, "--no-sync")
	}
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "initdb"), args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	s.prepare(cmd, cred)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("pgserver: initdb %s: %w\n%s%s", s.dataDir, err, out.Bytes(), accessHint(cred))
	}
	return s.keepPassword(cred)
}

// setPassword gives the superuser of a cluster that has no password file a
// new password, in single-user mode (the server does not run, nothing can
// connect meanwhile), and makes every connection need it.
func (s *Server) setPassword(ctx context.Context, binDir string, cred *syscall.Credential) error {
	s.password = newPassword()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "postgres"), "--single", "-D", s.dataDir, "postgres")
	cmd.Stdin = strings.NewReader("ALTER ROLE " + User + " PASSWORD '" + s.password + "'\n")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	s.prepare(cmd, cred)
	if err := cmd.Run(); err != nil || strings.Contains(out.String(), "ERROR") {
		return fmt.Errorf("pgserver: set the password of %s: %v\n%s%s", s.dataDir, err, out.Bytes(), accessHint(cred))
	}
	return s.keepPassword(cred)
}

// keepPassword writes pg_hba.conf and the password file.
func (s *Server) keepPassword(cred *syscall.Credential) error {
	if err := writeOwned(filepath.Join(s.dataDir, "pg_hba.conf"), hba, cred); err != nil {
		return err
	}
	return writeOwned(filepath.Join(s.dataDir, PasswordFile), s.password+"\n", cred)
}

// ReadPassword returns the superuser's password of the cluster in dataDir,
// from its PasswordFile. A cluster that has none was made before Baton
// gave clusters passwords; its next Start gives it one.
func ReadPassword(dataDir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dataDir, PasswordFile))
	if err != nil {
		return "", fmt.Errorf("pgserver: the password of the cluster in %s: %w", dataDir, err)
	}
	pw := strings.TrimSpace(string(b))
	if pw == "" {
		return "", fmt.Errorf("pgserver: the password file of the cluster in %s is empty", dataDir)
	}
	return pw, nil
}

// newPassword returns 128 random bits as hex, which a URL carries as is.
func newPassword() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// writeOwned writes a file only its owner reads, owned by the server's
// user when it runs as another one.
func writeOwned(path, content string, cred *syscall.Credential) error {
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		return fmt.Errorf("pgserver: write %s: %w", path, err)
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		return fmt.Errorf("pgserver: write %s: %w", path, err)
	}
	if err := chownTo(tmp, cred); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("pgserver: write %s: %w", path, err)
	}
	return nil
}

// start runs postgres on port and waits until it accepts connections.
func (s *Server) start(ctx context.Context, binDir string, cred *syscall.Credential, port int, out io.Writer) error {
	s.log.Reset()
	sockDir := s.SocketDir()
	if err := os.MkdirAll(sockDir, 0o700); err != nil {
		return fmt.Errorf("pgserver: create socket folder: %w", err)
	}
	if err := chownTo(sockDir, cred); err != nil {
		return err
	}
	args := []string{
		"-D", s.dataDir,
		"-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "unix_socket_directories=" + sockDir,
		"-c", "max_connections=200",
		"-c", "logging_collector=off",
	}
	if s.noSync {
		// Throwaway data: trade durability for speed.
		args = append(args,
			"-c", "fsync=off",
			"-c", "synchronous_commit=off",
			"-c", "full_page_writes=off",
			"-c", "wal_level=minimal",
			"-c", "max_wal_senders=0",
			"-c", "checkpoint_timeout=1d",
		)
	}
	cmd := exec.Command(filepath.Join(binDir, "postgres"), args...)
	cmd.Stdout, cmd.Stderr = out, out
	s.prepare(cmd, cred)
	setParentDeathSignal(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pgserver: start postgres: %w", err)
	}
	s.cmd, s.port = cmd, port
	s.exited = make(chan struct{})
	go func() {
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()

	for {
		c, err := pgconn.Connect(ctx, s.URL())
		if err == nil {
			c.Close(context.Background())
			return nil
		}
		select {
		case <-s.exited:
			return fmt.Errorf("pgserver: postgres exited during start (%v):\n%s%s", s.waitErr, s.log.String(), accessHint(cred))
		case <-ctx.Done():
			s.kill()
			return fmt.Errorf("pgserver: postgres not accepting connections on port %d: %w (last error: %v)\n%s", port, ctx.Err(), err, s.log.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// prepare sets the working folder, environment and, as root, the user.
func (s *Server) prepare(cmd *exec.Cmd, cred *syscall.Credential) {
	cmd.Dir = s.runDir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "TZ=UTC")
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
}

// URL returns a postgres:// URL for the "postgres" database.
func (s *Server) URL() string { return s.DatabaseURL("postgres") }

// DatabaseURL returns a postgres:// URL for the named database.
func (s *Server) DatabaseURL(name string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.UserPassword(User, s.password),
		Host:     net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)),
		Path:     "/" + name,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// Password returns the password of User, which every connection needs.
func (s *Server) Password() string { return s.password }

// SocketDir returns the folder of the server's unix socket, private to the
// user the server runs as (and root).
func (s *Server) SocketDir() string { return filepath.Join(s.runDir, "sock") }

// Port returns the TCP port the server listens on (loopback only).
func (s *Server) Port() int { return s.port }

// DataDir returns the server's data folder.
func (s *Server) DataDir() string { return s.dataDir }

// Stop shuts the server down (fast shutdown: open sessions are ended) and,
// when the data folder is temporary, removes it. Calling Stop again returns
// the first call's result.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		s.stopErr = s.shutdown()
		if err := os.RemoveAll(s.runDir); err != nil && s.stopErr == nil {
			s.stopErr = fmt.Errorf("pgserver: remove %s: %w", s.runDir, err)
		}
	})
	return s.stopErr
}

func (s *Server) shutdown() error {
	if s.cmd == nil || s.cmd.Process == nil {
		return nil
	}
	select {
	case <-s.exited:
		return nil
	default:
	}
	// SIGINT is PostgreSQL's fast shutdown; SIGQUIT its immediate one.
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-s.exited:
		return nil
	case <-time.After(30 * time.Second):
	}
	s.kill()
	return fmt.Errorf("pgserver: postgres did not shut down within 30s; killed it")
}

func (s *Server) kill() {
	_ = s.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-s.exited:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

// findBinDir returns the folder holding initdb and postgres.
func findBinDir(dir string) (string, error) {
	has := func(d string) bool {
		for _, name := range []string{"initdb", "postgres"} {
			if fi, err := os.Stat(filepath.Join(d, name)); err != nil || fi.IsDir() {
				return false
			}
		}
		return true
	}
	if dir != "" {
		if !has(dir) {
			return "", fmt.Errorf("%w (looked in Options.BinDir %s)", ErrBinariesNotFound, dir)
		}
		return dir, nil
	}
	if p, err := exec.LookPath("postgres"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil && has(filepath.Dir(real)) {
			return filepath.Dir(real), nil
		}
		if has(filepath.Dir(p)) {
			return filepath.Dir(p), nil
		}
	}
	for _, pattern := range []string{"/usr/lib/postgresql/*/bin", "/usr/pgsql-*/bin"} {
		dirs, _ := filepath.Glob(pattern)
		// Newest major version first: 9 < 15 numerically, not as text.
		sort.Slice(dirs, func(i, j int) bool { return majorOf(dirs[i]) > majorOf(dirs[j]) })
		for _, d := range dirs {
			if has(d) {
				return d, nil
			}
		}
	}
	return "", ErrBinariesNotFound
}

func majorOf(binDir string) float64 {
	v := filepath.Base(filepath.Dir(binDir))
	v = strings.TrimPrefix(v, "pgsql-")
	f, _ := strconv.ParseFloat(v, 64)
	return f
}

// serverCredential returns nil when the server can run as the current user,
// and the postgres system user's credential when the current user is root.
func serverCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("pgserver: PostgreSQL refuses to run as root, and there is no `postgres` system user to run it as (%v); create one (useradd --system postgres) or run as a non-root user", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("pgserver: user postgres has non-numeric uid %q or gid %q", u.Uid, u.Gid)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
}

func chownTo(path string, cred *syscall.Credential) error {
	if cred == nil {
		return nil
	}
	if err := os.Chown(path, int(cred.Uid), int(cred.Gid)); err != nil {
		return fmt.Errorf("pgserver: hand %s to user postgres: %w", path, err)
	}
	return nil
}

func checkOwner(dir string, cred *syscall.Credential) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("pgserver: data folder: %w", err)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid != cred.Uid {
		return fmt.Errorf("pgserver: data folder %s belongs to uid %d, but the server runs as user postgres (uid %d); chown -R postgres: %s", dir, st.Uid, cred.Uid, dir)
	}
	return nil
}

func accessHint(cred *syscall.Credential) string {
	if cred == nil {
		return ""
	}
	return "\n(the server runs as user postgres: it needs to reach the data folder through every parent folder)"
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgserver: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

func (b *tailBuffer) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = b.buf[:0]
}
