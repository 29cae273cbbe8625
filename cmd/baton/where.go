package main

import (
	"context"
	"flag"
	"io"
	"log/slog"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/internal/devpg"
	"github.com/baton-run/baton/internal/store"
)

// whereFlags say which database and organization a command reads or
// writes: --database-url, else the PostgreSQL of baton dev's --data folder,
// and --org. import, publish, validate, map, insights and notify log share
// them.
type whereFlags struct {
	databaseURL, data, org string
}

func (w *whereFlags) register(fl *flag.FlagSet) {
	stringFlag(fl, &w.databaseURL, "database-url", "", "PostgreSQL URL; wins over --data")
	stringFlag(fl, &w.data, "data", defaultData, "data folder of baton dev: its PostgreSQL is used, whether baton dev runs or not, unless --database-url is given")
	stringFlag(fl, &w.org, "org", auth.DefaultOrg, "organization id")
}

// open opens the store in --database-url, else in the PostgreSQL of the
// --data folder: baton dev's running server, or one started on its cluster
// until the returned close function is called. Migrations are applied.
func (w *whereFlags) open(ctx context.Context, stderr io.Writer) (*store.Store, func(), error) {
	url, release := w.databaseURL, func() {}
	if url == "" {
		db, err := devpg.Open(ctx, w.data, &devpg.Options{Logger: slog.New(slog.NewTextHandler(stderr, nil))})
		if err != nil {
			return nil, nil, err
		}
		url, release = db.URL(), func() { _ = db.Close() }
	}
	st, err := openStore(ctx, url)
	if err != nil {
		release()
		return nil, nil, err
	}
	return st, func() { st.Close(); release() }, nil
}
