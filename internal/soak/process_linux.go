package soak

import (
	"os/exec"
	"syscall"
)

// setDeathSignal has the kernel kill the process when the one that
// started it dies, so no deployment outlives a crashed soak or test.
func setDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
