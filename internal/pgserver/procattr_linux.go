package pgserver

import (
	"os/exec"
	"syscall"
)

// setParentDeathSignal asks Linux to shut postgres down (fast shutdown) when
// the process that started it dies without calling Stop, so a crashed test
// binary leaves no server behind.
func setParentDeathSignal(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGINT
}
