package temporaldev

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	enums "go.temporal.io/api/enums/v1"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/log"
	postgresplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/postgresql"
	postgresschema "go.temporal.io/server/schema/postgresql/v12"
	toolschema "go.temporal.io/server/tools/common/schema"
	sqltool "go.temporal.io/server/tools/sql"
)

// DefaultPostgresDatabase is the default of Options.PostgresDatabase: the
// server's state lives in databases "temporal" and "temporal_visibility".
const DefaultPostgresDatabase = "temporal"

// visibilitySuffix names the visibility database after the main one.
const visibilitySuffix = "_visibility"

// postgresHistoryShards is the number of history shards of a server on
// PostgreSQL. Shards are Temporal's unit of write concurrency; the number
// is fixed when the databases are created. SQLite, on one connection, gets
// one.
const postgresHistoryShards = 4

// Connection pool of each of the server's services (frontend, history,
// matching, worker) to each database. database/sql opens connections as
// they are needed, so an idle service holds few.
const (
	postgresMaxConns        = 16
	postgresMaxConnLifetime = time.Hour
)

// Temporal's schemas for PostgreSQL, as embedded in the server module, and
// the versions this server runs on.
var (
	postgresMainSchema       = postgresSchema{dir: "postgresql/v12/temporal", version: postgresschema.Version}
	postgresVisibilitySchema = postgresSchema{dir: "postgresql/v12/visibility", version: postgresschema.VisibilityVersion}
)

type postgresSchema struct {
	dir     string // in go.temporal.io/server/schema, with schema.sql and versioned/
	version string // the version schema.sql is at
}

// postgresConfig turns a postgres:// URL into the server's SQL
// configuration for database name. It returns the database the URL names
// (default "postgres"), where the server's databases are created from.
func postgresConfig(raw, name string) (*config.SQL, string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
		return nil, "", fmt.Errorf("temporaldev: Options.PostgresURL is not a postgres://USER@HOST:PORT/DATABASE URL")
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "5432"
	}
	if host == "" || strings.Contains(u.Host, ",") {
		return nil, "", fmt.Errorf("temporaldev: Options.PostgresURL names no single host: give postgres://USER@HOST:PORT/DATABASE")
	}
	conf := &config.SQL{
		PluginName:        postgresplugin.PluginNamePGX,
		DatabaseName:      name,
		ConnectAddr:       net.JoinHostPort(host, port),
		ConnectProtocol:   "tcp",
		User:              u.User.Username(),
		MaxConns:          postgresMaxConns,
		MaxIdleConns:      postgresMaxConns,
		MaxConnLifetime:   postgresMaxConnLifetime,
		ConnectAttributes: map[string]string{},
	}
	conf.Password, _ = u.User.Password()
	for k, vs := range u.Query() {
		if len(vs) != 1 {
			return nil, "", fmt.Errorf("temporaldev: Options.PostgresURL gives %s %d times; give it once", k, len(vs))
		}
		conf.ConnectAttributes[k] = vs[0]
	}
	admin := strings.TrimPrefix(u.Path, "/")
	if admin == "" {
		admin = "postgres"
	}
	return conf, admin, nil
}

// preparePostgres creates the server's two databases when missing and sets
// up or updates Temporal's schema in each, then creates the namespace when
// it does not exist yet. It returns the SQL configuration of the main and
// the visibility database.
func preparePostgres(o Options, attrs map[string]enums.IndexedValueType, logger log.Logger) (main, visibility *config.SQL, err error) {
	main, admin, err := postgresConfig(o.PostgresURL, o.PostgresDatabase)
	if err != nil {
		return nil, nil, err
	}
	vis := *main
	vis.DatabaseName = o.PostgresDatabase + visibilitySuffix
	vis.ConnectAttributes = maps.Clone(main.ConnectAttributes)
	for _, db := range []struct {
		conf   *config.SQL
		schema postgresSchema
	}{{main, postgresMainSchema}, {&vis, postgresVisibilitySchema}} {
		if err := setupPostgresDatabase(db.conf, admin, db.schema, logger); err != nil {
			return nil, nil, err
		}
	}
	if err := createNamespace(main, o.Namespace, o.Retention, attrs); err != nil {
		return nil, nil, err
	}
	return main, &vis, nil
}

// setupPostgresDatabase creates conf's database from the admin database
// when missing, sets Temporal's schema up in it when it has none, and
// updates it to s.version when it is older. It refuses a database that
// holds tables but no Temporal schema version.
func setupPostgresDatabase(conf *config.SQL, admin string, s postgresSchema, logger log.Logger) error {
	name := conf.DatabaseName
	adminConf := *conf
	if err := sqltool.DoCreateDatabase(&adminConf, admin, logger); err != nil {
		return fmt.Errorf("temporaldev: create database %q from database %q at %s (the user needs CREATEDB, or create it beforehand): %w", name, admin, conf.ConnectAddr, err)
	}
	conn, err := sqltool.NewConnection(conf, logger)
	if err != nil {
		return fmt.Errorf("temporaldev: connect to database %q at %s: %w", name, conf.ConnectAddr, err)
	}
	defer conn.Close()
	if _, err := conn.ReadSchemaVersion(); err != nil {
		tables, lerr := conn.ListTables()
		if lerr != nil {
			return fmt.Errorf("temporaldev: database %q at %s: %w", name, conf.ConnectAddr, errors.Join(err, lerr))
		}
		if other := slices.DeleteFunc(tables, isVersionTable); len(other) > 0 {
			return fmt.Errorf("temporaldev: database %q at %s holds tables (%s) but no Temporal schema version; give Options.PostgresDatabase another name, or drop the database", name, conf.ConnectAddr, strings.Join(other, ", "))
		}
		setup := toolschema.NewSetupSchemaTask(conn, &toolschema.SetupConfig{SchemaName: s.dir, InitialVersion: s.version}, logger)
		if err := guard(setup.Run); err != nil {
			return fmt.Errorf("temporaldev: set up Temporal's schema %s in database %q: %w", s.dir, name, err)
		}
	}
	update := toolschema.NewUpdateSchemaTask(conn, &toolschema.UpdateConfig{DBName: name, SchemaName: s.dir, TargetVersion: s.version}, logger)
	if err := guard(update.Run); err != nil {
		return fmt.Errorf("temporaldev: update Temporal's schema in database %q to %s: %w", name, s.version, err)
	}
	return nil
}

// isVersionTable reports the tables a schema setup creates first.
func isVersionTable(name string) bool {
	return name == "schema_version" || name == "schema_update_history"
}
