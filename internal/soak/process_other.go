//go:build !linux

package soak

import "os/exec"

// setDeathSignal does nothing where the kernel offers no death signal:
// whoever starts a deployment stops every process of it.
func setDeathSignal(*exec.Cmd) {}
