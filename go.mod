module github.com/baton-run/baton

go 1.26.8

require (
	github.com/gowebpki/jcs v1.0.2 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/pgx/v5 v5.12.0 // indirect
	github.com/modelcontextprotocol/go-sdk v1.8.0 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 // indirect
	github.com/temporalio/ui-server/v2 v2.55.0 // indirect
	go.temporal.io/api v1.63.5 // indirect
	go.temporal.io/sdk v1.50.0 // indirect
	go.temporal.io/server v1.32.1 // indirect
	golang.org/x/text v0.41.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
