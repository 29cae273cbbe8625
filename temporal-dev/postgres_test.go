package temporaldev_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	enums "go.temporal.io/api/enums/v1"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/log"
	postgresplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/postgresql"
	postgresschema "go.temporal.io/server/schema/postgresql/v12"
	toolschema "go.temporal.io/server/tools/common/schema"
	sqltool "go.temporal.io/server/tools/sql"

	"github.com/baton-run/baton/internal/pgserver"
	"github.com/baton-run/baton/internal/testing/pgtest"
	temporaldev "github.com/baton-run/baton/temporal-dev"
)

// postgresDatabase returns a fresh name for a server's databases on the
// shared PostgreSQL, and drops both databases when the test ends.
func postgresDatabase(t *testing.T) (*pgserver.Server, string) {
	t.Helper()
	pg := pgtest.Shared(t)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "tmp_" + hex.EncodeToString(b)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, db := range []string{name, name + "_visibility"} {
			if err := pg.DropDatabase(ctx, db); err != nil {
				t.Errorf("drop %s: %v", db, err)
			}
		}
	})
	return pg, name
}

// schemaVersion reads the Temporal schema version recorded in a database.
func schemaVersion(t *testing.T, pg *pgserver.Server, db string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pg.DatabaseURL(db))
	if err != nil {
		t.Fatalf("connect to %s: %v", db, err)
	}
	defer conn.Close(ctx)
	var v string
	if err := conn.QueryRow(ctx, `SELECT curr_version FROM schema_version WHERE db_name = $1`, db).Scan(&v); err != nil {
		t.Fatalf("schema version of %s: %v", db, err)
	}
	return v
}

func startOnPostgres(t *testing.T, opts *temporaldev.Options) *temporaldev.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	begin := time.Now()
	s, err := temporaldev.Start(ctx, opts)
	if err != nil {
		t.Fatalf("Start on PostgreSQL: %v", err)
	}
	t.Logf("start on PostgreSQL: %s", time.Since(begin).Round(time.Millisecond))
	t.Cleanup(func() { _ = s.Stop() })
	return s
}

// A server on PostgreSQL creates its two databases with Temporal's schema
// at this server's version, runs workflows, registers search attributes
// through the operator API, and finds everything again after a restart.
func TestPostgres(t *testing.T) {
	t.Parallel()
	pg, db := postgresDatabase(t)
	attrs := map[string]enums.IndexedValueType{
		"PgKeyword": enums.INDEXED_VALUE_TYPE_KEYWORD,
		"PgInt":     enums.INDEXED_VALUE_TYPE_INT,
	}
	opts := &temporaldev.Options{PostgresURL: pg.URL(), PostgresDatabase: db, SearchAttributes: attrs}
	s := startOnPostgres(t, opts)
	if got := schemaVersion(t, pg, db); got != postgresschema.Version {
		t.Errorf("schema version of %s = %s, want %s", db, got, postgresschema.Version)
	}
	if got := schemaVersion(t, pg, db+"_visibility"); got != postgresschema.VisibilityVersion {
		t.Errorf("schema version of %s_visibility = %s, want %s", db, got, postgresschema.VisibilityVersion)
	}
	run := runGreet(t, newClient(t, s), "greet-on-postgres")
	checkSearchAttributes(t, newClient(t, s), s.Namespace(), attrs)
	if err := s.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}

	// Started again, with one more search attribute.
	attrs["PgAfterRestart"] = enums.INDEXED_VALUE_TYPE_BOOL
	s = startOnPostgres(t, opts)
	c := newClient(t, s)
	desc, err := c.DescribeWorkflowExecution(context.Background(), run.GetID(), run.GetRunID())
	if err != nil {
		t.Fatalf("describe the workflow after a restart: %v", err)
	}
	if got := desc.GetWorkflowExecutionInfo().GetStatus(); got != enums.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		t.Errorf("status after restart = %v, want COMPLETED", got)
	}
	checkSearchAttributes(t, c, s.Namespace(), attrs)
	runGreet(t, c, "greet-after-restart")
}

// Two servers on one PostgreSQL, each with databases of its own (and the
// second with a namespace of its own), run side by side.
func TestPostgresTwoServers(t *testing.T) {
	t.Parallel()
	pg, db1 := postgresDatabase(t)
	_, db2 := postgresDatabase(t)
	s1 := startOnPostgres(t, &temporaldev.Options{PostgresURL: pg.URL(), PostgresDatabase: db1})
	s2 := startOnPostgres(t, &temporaldev.Options{PostgresURL: pg.URL(), PostgresDatabase: db2, Namespace: "baton-pg"})
	runGreet(t, newClient(t, s1), "greet-one")
	c2 := newClient(t, s2)
	if s2.Namespace() != "baton-pg" {
		t.Errorf("Namespace() = %q, want baton-pg", s2.Namespace())
	}
	runGreet(t, c2, "greet-two")
	if _, err := c2.DescribeWorkflowExecution(context.Background(), "greet-one", ""); err == nil {
		t.Error("the second server sees the first server's workflow")
	}
}

// A database left at an older schema version, as an older server would
// leave it, is updated on start.
func TestPostgresUpdatesOlderSchema(t *testing.T) {
	t.Parallel()
	pg, db := postgresDatabase(t)
	old := map[string]string{db: "1.17", db + "_visibility": "1.12"}
	dirs := map[string]string{db: "postgresql/v12/temporal", db + "_visibility": "postgresql/v12/visibility"}
	for name, version := range old {
		if _, err := pg.CreateDatabase(context.Background(), name); err != nil {
			t.Fatal(err)
		}
		conf := &config.SQL{
			PluginName: postgresplugin.PluginNamePGX, DatabaseName: name, User: pgserver.User, Password: pg.Password(),
			ConnectAddr: "127.0.0.1:" + strconv.Itoa(pg.Port()), ConnectAttributes: map[string]string{"sslmode": "disable"},
		}
		conn, err := sqltool.NewConnection(conf, log.NewNoopLogger())
		if err != nil {
			t.Fatal(err)
		}
		err = toolschema.NewSetupSchemaTask(conn, &toolschema.SetupConfig{InitialVersion: "0.0"}, log.NewNoopLogger()).Run()
		if err == nil {
			err = toolschema.NewUpdateSchemaTask(conn, &toolschema.UpdateConfig{SchemaName: dirs[name], TargetVersion: version}, log.NewNoopLogger()).Run()
		}
		conn.Close()
		if err != nil {
			t.Fatalf("set %s up at version %s: %v", name, version, err)
		}
		if got := schemaVersion(t, pg, name); got != version {
			t.Fatalf("%s set up at %s, want %s", name, got, version)
		}
	}
	s := startOnPostgres(t, &temporaldev.Options{PostgresURL: pg.URL(), PostgresDatabase: db})
	if got := schemaVersion(t, pg, db); got != postgresschema.Version {
		t.Errorf("schema version of %s after start = %s, want %s", db, got, postgresschema.Version)
	}
	if got := schemaVersion(t, pg, db+"_visibility"); got != postgresschema.VisibilityVersion {
		t.Errorf("schema version of %s_visibility after start = %s, want %s", db, got, postgresschema.VisibilityVersion)
	}
	runGreet(t, newClient(t, s), "greet-after-update")
}

func TestPostgresRefuses(t *testing.T) {
	t.Parallel()
	pg, db := postgresDatabase(t)
	ctx := context.Background()
	// A database that is someone else's.
	if _, err := pg.CreateDatabase(ctx, db); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, pg.DatabaseURL(db))
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(ctx, `CREATE TABLE customers (id int)`)
	conn.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		opts temporaldev.Options
		want string
	}{
		{"a database holding other tables", temporaldev.Options{PostgresURL: pg.URL(), PostgresDatabase: db}, "holds tables (customers)"},
		{"both stores", temporaldev.Options{PostgresURL: pg.URL(), DatabaseFile: "dev.db"}, "both set"},
		{"not a URL", temporaldev.Options{PostgresURL: "host=localhost user=postgres"}, "Options.PostgresURL"},
		{"database name without URL", temporaldev.Options{PostgresDatabase: "temporal"}, "Options.PostgresURL is not"},
		{"bad database name", temporaldev.Options{PostgresURL: pg.URL(), PostgresDatabase: "temporal; drop"}, "Options.PostgresDatabase"},
		{"no server there", temporaldev.Options{PostgresURL: "postgres://postgres@127.0.0.1:1/postgres"}, "create database"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			s, err := temporaldev.Start(ctx, &tt.opts)
			if err == nil {
				_ = s.Stop()
				t.Fatalf("Start succeeded, want an error mentioning %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Start error = %q, want it to mention %q", err, tt.want)
			}
		})
	}
}
