package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	temporaldev "github.com/baton-run/baton/temporal-dev"
)

// baton dev's fixed defaults: the gateway on 127.0.0.1:8080, Temporal's
// frontend on 7233 and its Web UI on 8233. A default that is taken gives
// way to a free port, and baton dev says so; a port named by its flag (or
// the flag's environment variable) must be free, or baton dev stops
// before it starts anything, naming the flag. Everything else baton dev
// opens (PostgreSQL, the metrics listener, Temporal's internal services)
// is on a free port already.
const (
	defaultDevTemporalPort = 7233
	defaultDevUIPort       = 8233
)

// devPorts records which of baton dev's fixed ports were named and which
// defaults gave way.
type devPorts struct {
	// given holds the flags named on the command line or in the environment.
	given map[string]bool
	// The defaults that were taken, with the port each asked for.
	listenMoved, temporalMoved, uiMoved string
}

// givenFlags returns the flags of fl named on the command line or by
// their environment variables: what the user chose, as opposed to a
// default.
func givenFlags(fl *flag.FlagSet) map[string]bool {
	given := map[string]bool{}
	fl.Visit(func(f *flag.Flag) { given[f.Name] = true })
	fl.VisitAll(func(f *flag.Flag) {
		if _, ok := os.LookupEnv(envName(f.Name)); ok && strings.HasSuffix(f.Usage, envNote(f.Name)) {
			given[f.Name] = true
		}
	})
	return given
}

// resolve checks the ports of cfg before anything starts: a named one
// that is taken is an error naming its flag; a default that is taken is
// replaced in cfg by a free one (port 0, or temporaldev.FreePort for the
// UI) and remembered for notes.
func (p *devPorts) resolve(cfg *devConfig) error {
	if host, port, err := net.SplitHostPort(cfg.listen); err == nil && port != "0" {
		if err := portFree(cfg.listen); err != nil {
			if p.given["listen"] {
				return fmt.Errorf("--listen %s: %w: stop what listens there, or give another address (port 0 for a free one)", cfg.listen, err)
			}
			p.listenMoved, cfg.listen = cfg.listen, net.JoinHostPort(host, "0")
		}
	}
	if cfg.temporalPort > 0 {
		addr := net.JoinHostPort(temporaldev.DefaultIP, strconv.Itoa(cfg.temporalPort))
		if err := portFree(addr); err != nil {
			if p.given["temporal-port"] {
				return fmt.Errorf("--temporal-port %d: %w: stop what listens there, or give another port (0 for a free one)", cfg.temporalPort, err)
			}
			p.temporalMoved, cfg.temporalPort = strconv.Itoa(cfg.temporalPort), 0
		}
	}
	if cfg.uiPort > 0 {
		addr := net.JoinHostPort(temporaldev.DefaultIP, strconv.Itoa(cfg.uiPort))
		if err := portFree(addr); err != nil {
			if p.given["ui-port"] {
				return fmt.Errorf("--ui-port %d: %w: stop what listens there, or give another port (-1 for a free one, 0 for no UI)", cfg.uiPort, err)
			}
			p.uiMoved, cfg.uiPort = strconv.Itoa(cfg.uiPort), temporaldev.FreePort
		}
	}
	return nil
}

// defaultsInPlay reports whether cfg still asks for a fixed default port
// that another baton dev starting at the same moment could also ask for.
func (p *devPorts) defaultsInPlay(cfg *devConfig) bool {
	return (cfg.temporalPort > 0 && !p.given["temporal-port"]) || (cfg.uiPort > 0 && !p.given["ui-port"])
}

// temporalTaken reports whether Temporal failed to start because a default
// port of cfg was taken after resolve found it free; the caller then
// starts it on free ports.
func (p *devPorts) temporalTaken(cfg *devConfig, err error) bool {
	if err == nil || !p.defaultsInPlay(cfg) {
		return false
	}
	if !errors.Is(err, syscall.EADDRINUSE) && !strings.Contains(err.Error(), "address already in use") {
		return false
	}
	if cfg.temporalPort > 0 && !p.given["temporal-port"] {
		p.temporalMoved, cfg.temporalPort = strconv.Itoa(cfg.temporalPort), 0
	}
	if cfg.uiPort > 0 && !p.given["ui-port"] {
		p.uiMoved, cfg.uiPort = strconv.Itoa(cfg.uiPort), temporaldev.FreePort
	}
	return true
}

// listen opens the gateway's listener on cfg.listen; a default address
// taken since resolve gives way to a free port.
func (p *devPorts) listen(cfg *devConfig) (net.Listener, error) {
	ln, err := net.Listen("tcp", cfg.listen)
	if err == nil || p.given["listen"] || !errors.Is(err, syscall.EADDRINUSE) {
		if err != nil {
			return nil, fmt.Errorf("listen on %s (--listen): %w", cfg.listen, err)
		}
		return ln, nil
	}
	host, _, _ := net.SplitHostPort(cfg.listen)
	p.listenMoved, cfg.listen = cfg.listen, net.JoinHostPort(host, "0")
	ln, err = net.Listen("tcp", cfg.listen)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", cfg.listen, err)
	}
	return ln, nil
}

// print says which defaults were taken and where baton dev went instead.
func (p *devPorts) print(w io.Writer, gateway, frontend, ui string) {
	if p.listenMoved != "" {
		fmt.Fprintf(w, "Port %s is taken: the gateway listens on %s instead (--listen chooses)\n", portOf(p.listenMoved), strings.TrimPrefix(gateway, "http://"))
	}
	if p.temporalMoved != "" {
		fmt.Fprintf(w, "Port %s is taken: Temporal's frontend is on %s instead (--temporal-port chooses)\n", p.temporalMoved, frontend)
	}
	if p.uiMoved != "" {
		fmt.Fprintf(w, "Port %s is taken: the Temporal UI is on %s instead (--ui-port chooses)\n", p.uiMoved, strings.TrimSuffix(strings.TrimPrefix(ui, "http://"), "/"))
	}
}

func portOf(addr string) string {
	if _, port, err := net.SplitHostPort(addr); err == nil {
		return port
	}
	return addr
}

// portFree reports whether addr can be listened on now.
func portFree(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return errors.New("the port is taken")
		}
		return err
	}
	return ln.Close()
}

// portsLock orders the starts of this user's baton dev processes while
// they claim default ports: Temporal's Web UI server exits its process
// when a port it was told is free has been taken meanwhile, so two baton
// dev started at the same moment must not both find 8233 free. The lock
// is an flock on a file in the user's cache folder, released when the
// start is done or the process dies; without a cache folder nothing is
// locked.
func portsLock(log func(string)) (unlock func()) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return func() {}
	}
	dir = filepath.Join(dir, "baton")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return func() {}
	}
	f, err := os.OpenFile(filepath.Join(dir, "dev-ports.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return func() {}
	}
	deadline := time.Now().Add(2 * time.Minute)
	logged := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) || time.Now().After(deadline) {
			f.Close()
			return func() {}
		}
		if !logged {
			log("waiting for another baton dev to open its ports")
			logged = true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close()
	}
}

// devLockFile, in the data folder, is held by the baton dev using it.
const devLockFile = "dev.lock"

// lockData takes the data folder for this baton dev, or says which
// process has it: two baton dev on one data folder would share one
// PostgreSQL cluster and one Temporal store.
func lockData(data string) (unlock func(), err error) {
	path := filepath.Join(data, devLockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock the data folder: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b := make([]byte, 32)
		n, _ := f.ReadAt(b, 0)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			holder := "another baton dev"
			if pid := strings.TrimSpace(string(b[:n])); pid != "" {
				holder += " (pid " + pid + ")"
			}
			return nil, fmt.Errorf("the data folder %s is in use by %s: stop it, or give this one a folder of its own with --data", data, holder)
		}
		return nil, fmt.Errorf("lock the data folder %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() {
		_ = f.Truncate(0)
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close()
	}, nil
}
