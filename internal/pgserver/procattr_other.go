//go:build !linux

package pgserver

import "os/exec"

// setParentDeathSignal is Linux-only; elsewhere a server whose starter dies
// without calling Stop keeps running until stopped by hand.
func setParentDeathSignal(cmd *exec.Cmd) {}
