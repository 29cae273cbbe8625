// Package binary tests the built baton binary from outside, as its users
// run it: one `baton dev` serving two organizations, each with its own tool
// server, whose inboxes, runs, files and tool registrations stay apart;
// `baton token --org` and `baton runs --org`; and an unauthenticated caller
// that announces a body and stalls, refused and cut off every time, under
// load too.
//
// The package has only tests; this file holds its documentation.
package binary
