package faults

import (
	"os/exec"
	"syscall"
)

// setDeathSignal has the kernel kill the process when the test binary
// dies, so no deployment outlives a crashed test.
func setDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
