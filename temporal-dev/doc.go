// Package temporaldev runs a real Temporal server inside the current process,
// for `baton dev` and for tests.
//
// The server keeps its state in SQLite: in a file, so runs survive a restart,
// or in memory, so a test starts from nothing. It serves the Temporal frontend
// (gRPC) on a loopback port, optionally the Temporal Web UI beside it, creates
// its namespace, and registers Baton's search attributes (and any others asked
// for) on every start, since an existing SQLite file ignores search attributes
// given only at creation.
//
//	srv, err := temporaldev.Start(ctx, &temporaldev.Options{
//		DatabaseFile: "baton-dev.db",
//		FrontendPort: 7233,
//		UIPort:       8233,
//	})
//	if err != nil { ... }
//	defer srv.Stop()
//	c, err := srv.NewClient(ctx, client.Options{})
//
// Start returns once the frontend answers for the namespace, the search
// attributes are registered and the UI (if any) answers HTTP; that takes about
// a second. One process may run several servers, each on its own ports and
// database.
package temporaldev
