package faults

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

// proc is one Baton process of the deployment: the built binary with its
// arguments. It can be started, killed and started again; its output of
// every life is kept, to quote on failure and to scan for panics.
type proc struct {
	name  string
	args  []string
	ready *regexp.Regexp // a line on stdout saying it serves

	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{} // closed when the current life ends
	killing bool          // the current life is being ended on purpose
	crashes []string      // lives that ended without being asked to
	out     bytes.Buffer  // every life's output
	lives   int
}

// lockedWriter appends to a proc's output under its lock.
type lockedWriter struct{ p *proc }

func (w lockedWriter) Write(b []byte) (int, error) {
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	return w.p.out.Write(b)
}

// start starts a new life and waits until it prints its ready line.
func (p *proc) start(timeout time.Duration) error {
	p.mu.Lock()
	p.lives++
	fmt.Fprintf(&p.out, "---- %s, life %d: %s\n", p.name, p.lives, strings.Join(p.args, " "))
	cmd := exec.Command(binary, p.args...)
	cmd.Env = childEnv()
	setDeathSignal(cmd)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		p.mu.Unlock()
		return err
	}
	cmd.Stderr = lockedWriter{p}
	if err := cmd.Start(); err != nil {
		p.mu.Unlock()
		return fmt.Errorf("start %s: %w", p.name, err)
	}
	exited := make(chan struct{})
	p.cmd, p.exited, p.killing = cmd, exited, false
	p.mu.Unlock()

	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		once := sync.Once{}
		for sc.Scan() {
			line := sc.Text()
			_, _ = lockedWriter{p}.Write([]byte(line + "\n"))
			if p.ready.MatchString(line) {
				once.Do(func() { close(ready) })
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		if !p.killing {
			p.crashes = append(p.crashes, fmt.Sprintf("life %d ended by itself: %v", p.lives, err))
		}
		p.mu.Unlock()
		close(exited)
	}()
	select {
	case <-ready:
		return nil
	case <-exited:
		return fmt.Errorf("%s exited before it was ready:\n%s", p.name, p.tail())
	case <-time.After(timeout):
		p.signal(syscall.SIGKILL)
		return fmt.Errorf("%s not ready after %s:\n%s", p.name, timeout, p.tail())
	}
}

// signal sends sig to the current life, marking its end as wanted, and
// waits for it to end (up to 30 seconds, then it is killed).
func (p *proc) signal(sig syscall.Signal) {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	if cmd == nil {
		p.mu.Unlock()
		return
	}
	p.killing = true
	fmt.Fprintf(&p.out, "---- %s: sent %v\n", p.name, sig)
	p.mu.Unlock()
	_ = cmd.Process.Signal(sig)
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
	}
}

// kill ends the current life with SIGKILL: no clean-up of any kind.
func (p *proc) kill() { p.signal(syscall.SIGKILL) }

// stop ends the current life with SIGTERM, as an operator would.
func (p *proc) stop() { p.signal(syscall.SIGTERM) }

// pid is the current life's process id.
func (p *proc) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// tail is the end of the output of every life, for failure messages.
func (p *proc) tail() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	b := p.out.Bytes()
	if len(b) > 6000 {
		b = b[len(b)-6000:]
	}
	return string(b)
}

// panics counts the lines of every life's output that report a panic:
// the gateway's recovered "tool panicked" and the runtime's "panic:".
func (p *proc) panics() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var found []string
	for _, line := range strings.Split(p.out.String(), "\n") {
		if strings.Contains(strings.ToLower(line), "panic") {
			found = append(found, line)
		}
	}
	return found
}

// unexpectedExits lists the lives that ended without being asked to.
func (p *proc) unexpectedExits() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.crashes...)
}

// childEnv is this process's environment without BATON_ variables, so
// the flags the tests give are all a process gets.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BATON_") {
			env = append(env, kv)
		}
	}
	return env
}
