// Package soak runs Baton as a deployment of separate processes on this
// machine, as `baton bench --soak` does and as the tests that kill, stop and
// restart them do: each process is the baton binary with its arguments,
// started, killed with SIGKILL or stopped with SIGTERM, and started again,
// its output of every life kept to quote and to scan for panics.
package soak
