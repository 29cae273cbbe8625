//go:build !linux

package faults

import "os/exec"

// setDeathSignal does nothing where the kernel offers no death signal:
// TestMain stops every process it started.
func setDeathSignal(*exec.Cmd) {}
