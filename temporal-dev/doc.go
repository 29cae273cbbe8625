// Package temporaldev runs a real Temporal server inside the current process,
// for `baton dev` and for tests.
//
// The server keeps its state in SQLite: in a file, so runs survive a restart,
// or in memory, so a test starts from nothing. Or it keeps it in PostgreSQL
// (Options.PostgresURL), in two databases of its own with Temporal's SQL
// schema, set up or updated on every start: PostgreSQL takes writes in
// parallel where SQLite serialises them on one connection, and the state
// outlives the process, so the server can run as a process of its own
// beside Baton's (`baton temporal`). It serves the Temporal frontend (gRPC)
// on a loopback port, optionally the Temporal Web UI beside it, creates its
// namespace, and registers Baton's search attributes (and any others asked
// for) through the operator API on every start, since an existing database
// ignores search attributes given only at creation.
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
//
// The folder is temporal-dev, the name the project's layout gives it; Go
// forbids a dash in a package name, so the package is temporaldev and every
// importer names it so:
//
//	import temporaldev "github.com/baton-run/baton/temporal-dev"
package temporaldev
