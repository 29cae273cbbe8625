package soak

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Process is one process of a deployment on this machine: a binary with
// its arguments that is started, killed or stopped, and started again. The
// output of every life is kept, to quote when something fails and to scan
// for panics; a life that ends without being asked to is counted.
type Process struct {
	// Name names the process in its output and in errors.
	Name string
	// Path is the binary.
	Path string
	// Args are its arguments.
	Args []string
	// Ready matches the line on standard output that says it serves.
	Ready *regexp.Regexp
	// Env is its environment. Default: this process's, without BATON_
	// variables, so the arguments are all a Baton process is told.
	Env []string

	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{} // closed when the current life ends
	killing bool          // the current life is being ended on purpose
	crashes []string      // lives that ended without being asked to
	out     bytes.Buffer  // every life's output
	lives   int
}

// lockedWriter appends to a Process's output under its lock.
type lockedWriter struct{ p *Process }

func (w lockedWriter) Write(b []byte) (int, error) {
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	return w.p.out.Write(b)
}

// Start starts a new life and waits up to timeout until it prints its
// Ready line; one that does not is killed.
func (p *Process) Start(timeout time.Duration) error {
	p.mu.Lock()
	p.lives++
	fmt.Fprintf(&p.out, "---- %s, life %d: %s\n", p.Name, p.lives, strings.Join(p.Args, " "))
	cmd := exec.Command(p.Path, p.Args...)
	cmd.Env = p.Env
	if cmd.Env == nil {
		cmd.Env = ChildEnv()
	}
	setDeathSignal(cmd)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		p.mu.Unlock()
		return err
	}
	cmd.Stderr = lockedWriter{p}
	if err := cmd.Start(); err != nil {
		p.mu.Unlock()
		return fmt.Errorf("start %s: %w", p.Name, err)
	}
	exited := make(chan struct{})
	p.cmd, p.exited, p.killing = cmd, exited, false
	life := p.lives
	p.mu.Unlock()

	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		once := sync.Once{}
		for sc.Scan() {
			line := sc.Text()
			_, _ = lockedWriter{p}.Write([]byte(line + "\n"))
			if p.Ready.MatchString(line) {
				once.Do(func() { close(ready) })
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		if !p.killing {
			p.crashes = append(p.crashes, fmt.Sprintf("life %d ended by itself: %v", life, err))
		}
		p.mu.Unlock()
		close(exited)
	}()
	select {
	case <-ready:
		return nil
	case <-exited:
		return fmt.Errorf("%s exited before it was ready:\n%s", p.Name, p.Tail())
	case <-time.After(timeout):
		p.Signal(syscall.SIGKILL)
		return fmt.Errorf("%s not ready after %s:\n%s", p.Name, timeout, p.Tail())
	}
}

// Signal sends sig to the current life, marking its end as wanted, and
// waits for it to end: up to 60 seconds, then it is killed.
func (p *Process) Signal(sig syscall.Signal) {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	if cmd == nil {
		p.mu.Unlock()
		return
	}
	p.killing = true
	fmt.Fprintf(&p.out, "---- %s: sent %v\n", p.Name, sig)
	p.mu.Unlock()
	_ = cmd.Process.Signal(sig)
	select {
	case <-exited:
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		<-exited
	}
}

// Kill ends the current life with SIGKILL: no clean-up of any kind.
func (p *Process) Kill() { p.Signal(syscall.SIGKILL) }

// Stop ends the current life with SIGTERM, as an operator would: it
// drains first.
func (p *Process) Stop() { p.Signal(syscall.SIGTERM) }

// Running reports whether the current life has not ended.
func (p *Process) Running() bool {
	p.mu.Lock()
	exited := p.exited
	p.mu.Unlock()
	if exited == nil {
		return false
	}
	select {
	case <-exited:
		return false
	default:
		return true
	}
}

// PID is the current life's process id, or 0.
func (p *Process) PID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// Output is every life's output so far.
func (p *Process) Output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// Tail is the end of every life's output, for failure messages.
func (p *Process) Tail() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	b := p.out.Bytes()
	if len(b) > 6000 {
		b = b[len(b)-6000:]
	}
	return string(b)
}

// Panics lists the lines of every life's output that report a panic: the
// gateway's recovered "tool panicked" and the runtime's "panic:". A line
// is cut before its stack, and to panicLineMax bytes: the report quotes
// them, and the whole line is in the process's output.
func (p *Process) Panics() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var found []string
	for _, line := range strings.Split(p.out.String(), "\n") {
		if strings.Contains(strings.ToLower(line), "panic") {
			if i := strings.Index(line, " stack="); i > 0 {
				line = line[:i]
			}
			if len(line) > panicLineMax {
				line = line[:panicLineMax] + "…"
			}
			found = append(found, line)
		}
	}
	return found
}

// panicLineMax bounds a panic line as Panics quotes it.
const panicLineMax = 300

// UnexpectedExits lists the lives that ended without being asked to.
func (p *Process) UnexpectedExits() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.crashes...)
}

// ChildEnv is this process's environment without BATON_ variables.
func ChildEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BATON_") {
			env = append(env, kv)
		}
	}
	return env
}
