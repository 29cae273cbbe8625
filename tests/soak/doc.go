// Package soak runs the chaos soak through the built binary, as its users
// run it: `baton bench --soak 2m --chaos` starts Baton as separate
// processes, drives the mix of work while it kills, drains and restarts
// every one of them and stalls requests, then checks every run, every
// requestId, every view, every downstream call and every claim token. The
// checks themselves are tested on broken records in internal/soak.
//
// The package has only tests; this file holds its documentation.
package soak
