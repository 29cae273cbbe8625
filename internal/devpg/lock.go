package devpg

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// lockFile is a held exclusive flock on the data folder's LockFile. The
// kernel releases it when the process dies, so a killed command never
// leaves the cluster locked.
type lockFile struct{ f *os.File }

// lock takes the exclusive lock, polling until it is free, ctx ends or
// o.Wait passes.
func lock(ctx context.Context, dataDir string, o Options) (*lockFile, error) {
	path := filepath.Join(dataDir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("devpg: open the lock file: %w", err)
	}
	deadline := time.Now().Add(o.Wait)
	logged := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return &lockFile{f: f}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("devpg: lock %s: %w", path, err)
		}
		if !logged && o.Logger != nil {
			o.Logger.Info("waiting for another baton command to finish with the PostgreSQL of the data folder", "lock", path)
			logged = true
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("devpg: %s stayed locked for %v: another baton command (or a starting baton dev) is using the PostgreSQL of %s; try again when it is done", path, o.Wait, dataDir)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("devpg: waiting for %s: %w", path, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// unlock releases the lock. The file stays: removing it would let two
// processes lock different files of the same name.
func (l *lockFile) unlock() {
	_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	_ = l.f.Close()
}
