package soak

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/internal/pgserver"
)

// Org is the organization the deployment serves.
const Org = auth.DefaultOrg

// DeploymentOptions configure [NewDeployment].
type DeploymentOptions struct {
	// Binary is the baton binary every process runs. Required.
	Binary string
	// Dir is where the deployment keeps its state (PostgreSQL's data, the
	// keys, the tool registration); it must exist, reachable by the
	// postgres user when running as root. Required.
	Dir string
	// Workers and Gateways are how many of each run. Default 2 each.
	Workers, Gateways int
	// Lease is the gateways' claim lease. Default 15 seconds.
	Lease time.Duration
	// Drain is every process's --drain. Default 5 seconds.
	Drain time.Duration
	// ToolsFile is the tool registration every worker and gateway gets
	// (--tools). Default none.
	ToolsFile string
}

// Deployment is Baton as separate processes on this machine: PostgreSQL,
// Temporal on it (`baton temporal`), workers and gateways of organization
// Org. The gateways share the master key, so a claim token of one verifies
// on the other, and accept dev tokens of the deployment's key.
type Deployment struct {
	opts DeploymentOptions

	pg     *pgserver.Server
	pgDir  string
	pgPort int
	// DatabaseURL is Baton's database; Temporal has its own two.
	DatabaseURL string

	Temporal     *Process
	TemporalAddr string
	Workers      []*Process
	Gateways     []*Process
	// GatewayAddrs are the gateways' listen addresses, host:port.
	GatewayAddrs []string

	keyDir, secretFile string
	issuer             *auth.DevIssuer
}

// NewDeployment starts PostgreSQL, Temporal on it, the workers and the
// gateways. On an error the processes already started are left for Stop.
func NewDeployment(ctx context.Context, opts *DeploymentOptions) (*Deployment, error) {
	o := *opts
	if o.Binary == "" || o.Dir == "" {
		return nil, fmt.Errorf("soak: DeploymentOptions.Binary and Dir are required")
	}
	if o.Workers <= 0 {
		o.Workers = 2
	}
	if o.Gateways <= 0 {
		o.Gateways = 2
	}
	if o.Lease <= 0 {
		o.Lease = 15 * time.Second
	}
	if o.Drain <= 0 {
		o.Drain = 5 * time.Second
	}
	d := &Deployment{opts: o, pgDir: filepath.Join(o.Dir, "postgres"), keyDir: filepath.Join(o.Dir, "keys")}
	d.secretFile = filepath.Join(d.keyDir, "secret.key")
	var err error
	if d.issuer, err = auth.LoadOrCreateDevKey(d.keyDir); err != nil {
		return d, err
	}
	if _, err := auth.LoadOrCreateKey(d.secretFile); err != nil {
		return d, err
	}
	ports, err := freePorts(2 + o.Gateways)
	if err != nil {
		return d, err
	}
	d.pgPort = ports[0]
	if err := d.startPostgres(ctx); err != nil {
		return d, err
	}
	if _, err := d.pg.CreateDatabase(ctx, "baton"); err != nil {
		return d, err
	}
	d.DatabaseURL = d.pg.DatabaseURL("baton")
	if err := d.baton(ctx, "migrate", "--database-url", d.DatabaseURL); err != nil {
		return d, err
	}
	d.TemporalAddr = "127.0.0.1:" + strconv.Itoa(ports[1])
	d.Temporal = &Process{
		Name: "temporal", Path: o.Binary,
		Args:  []string{"temporal", "--database-url", d.pg.URL(), "--listen", d.TemporalAddr, "--ui-port", "0"},
		Ready: regexp.MustCompile(`^Temporal frontend: `),
	}
	if err := d.Temporal.Start(3 * time.Minute); err != nil {
		return d, err
	}
	for i := range o.Workers {
		args := []string{"worker", "--database-url", d.DatabaseURL, "--temporal-address", d.TemporalAddr, "--drain", o.Drain.String()}
		if o.ToolsFile != "" {
			args = append(args, "--tools", o.ToolsFile)
		}
		w := &Process{Name: fmt.Sprintf("worker-%d", i+1), Path: o.Binary, Args: args, Ready: regexp.MustCompile(`^Worker polling `)}
		if err := w.Start(2 * time.Minute); err != nil {
			return d, err
		}
		d.Workers = append(d.Workers, w)
	}
	for i := range o.Gateways {
		addr := "127.0.0.1:" + strconv.Itoa(ports[2+i])
		args := []string{
			"gateway", "--database-url", d.DatabaseURL, "--temporal-address", d.TemporalAddr,
			"--listen", addr, "--org", Org, "--secret-file", d.secretFile,
			"--dev-tokens", "--dev-key-dir", d.keyDir, "--lease", o.Lease.String(), "--drain", o.Drain.String(),
		}
		if o.ToolsFile != "" {
			args = append(args, "--tools", o.ToolsFile)
		}
		g := &Process{Name: fmt.Sprintf("gateway-%d", i+1), Path: o.Binary, Args: args, Ready: regexp.MustCompile(`^MCP: `)}
		if err := g.Start(2 * time.Minute); err != nil {
			return d, err
		}
		d.Gateways = append(d.Gateways, g)
		d.GatewayAddrs = append(d.GatewayAddrs, addr)
	}
	return d, nil
}

// GatewayURLs are the gateways' MCP endpoints.
func (d *Deployment) GatewayURLs() []string {
	var out []string
	for _, a := range d.GatewayAddrs {
		out = append(out, "http://"+a+"/mcp")
	}
	return out
}

// startPostgres starts PostgreSQL on the deployment's data folder and
// port, the first time and after a stop.
func (d *Deployment) startPostgres(ctx context.Context) error {
	pg, err := pgserver.Start(ctx, &pgserver.Options{DataDir: d.pgDir, Port: d.pgPort, NoSync: true})
	if err != nil {
		return err
	}
	d.pg = pg
	return nil
}

// RestartPostgres stops PostgreSQL (a fast shutdown: every session is
// cut), keeps it down for down, and starts it again on the same data and
// port.
func (d *Deployment) RestartPostgres(ctx context.Context, down time.Duration) error {
	if err := d.pg.Stop(); err != nil {
		return err
	}
	select {
	case <-time.After(down):
	case <-ctx.Done():
	}
	return d.startPostgres(context.WithoutCancel(ctx))
}

// Processes are every Baton process of the deployment.
func (d *Deployment) Processes() []*Process {
	var all []*Process
	if d.Temporal != nil {
		all = append(all, d.Temporal)
	}
	all = append(all, d.Workers...)
	return append(all, d.Gateways...)
}

// Stop stops every process, gateways first, then PostgreSQL.
func (d *Deployment) Stop() {
	for i := len(d.Gateways) - 1; i >= 0; i-- {
		d.Gateways[i].Stop()
	}
	for _, w := range d.Workers {
		w.Stop()
	}
	if d.Temporal != nil {
		d.Temporal.Stop()
	}
	if d.pg != nil {
		_ = d.pg.Stop()
	}
}

// Token mints the dev token of an identity.
func (d *Deployment) Token(w drive.Who) (string, error) {
	return d.issuer.Issue(auth.Identity{ID: w.ID, Kind: auth.Kind(w.Kind), Groups: w.Groups}, 24*time.Hour)
}

// Publish imports a process folder and publishes it, each role bound to
// the group of the same name, through the command line as an operator
// would.
func (d *Deployment) Publish(ctx context.Context, folder, name string) error {
	if err := d.baton(ctx, "import", "--database-url", d.DatabaseURL, "--org", Org, folder); err != nil {
		return err
	}
	return d.baton(ctx, "publish", "--database-url", d.DatabaseURL, "--org", Org, "--same-name-groups", name)
}

// baton runs one command of the binary to its end.
func (d *Deployment) baton(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, d.opts.Binary, args...)
	cmd.Env = ChildEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("baton %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// freePorts returns n distinct loopback ports that were free a moment ago.
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// ReachableTempDir makes a temporary folder the postgres user can reach
// when running as root.
func ReachableTempDir() (string, error) {
	dir, err := os.MkdirTemp("", "baton-soak-")
	if err != nil {
		return "", err
	}
	return dir, os.Chmod(dir, 0o755)
}
