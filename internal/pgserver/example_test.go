package pgserver_test

import (
	"context"
	"fmt"
	"log"

	"github.com/baton-run/baton/internal/pgserver"
)

// A persistent server, as `baton dev` runs one: the data folder is created
// and initialized on the first start, and reused, data and all, by later
// ones.
func ExampleStart() {
	ctx := context.Background()
	srv, err := pgserver.Start(ctx, &pgserver.Options{DataDir: ".baton/postgres", Port: 5433})
	if err != nil {
		log.Fatal(err) // names the package to install when PostgreSQL is missing
	}
	defer srv.Stop()
	fmt.Println(srv.URL()) // postgres://postgres:PASSWORD@127.0.0.1:5433/postgres?sslmode=disable
}
