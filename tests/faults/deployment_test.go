package faults

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
	"github.com/baton-run/baton/internal/soak"
)

// binary is the baton binary TestMain builds from this repository.
var binary string

// org is the organization of the deployment the load tests drive.
const org = "o_default"

// deployment is Baton as several processes on this machine, the shape
// the README's "Outgrowing one process" describes: PostgreSQL, Temporal on
// it as a process of its own, workers and gateways. The gateways share
// the master key (claim tokens from one verify on the other) and trust the
// dev tokens of keyDir.
type deployment struct {
	dir string // 0755, so PostgreSQL (run as postgres when root) reaches it

	pg     *pgserver.Server
	pgDir  string
	pgPort int
	// dbURL is Baton's database; Temporal has databases of its own.
	dbURL string

	temporal     *soak.Process
	temporalAddr string
	workers      []*soak.Process
	gateways     []*soak.Process
	gatewayURLs  []string // their MCP endpoints

	keyDir, secretFile string
	issuer             *auth.DevIssuer
}

// build compiles the baton binary into dir.
func build(dir string) (string, error) {
	out := filepath.Join(dir, "baton")
	cmd := exec.Command("go", "build", "-o", out, "github.com/baton-run/baton/cmd/baton")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, b)
	}
	return out, nil
}

// newDeployment starts PostgreSQL, Temporal on it, two workers and two
// gateways of organization org.
func newDeployment(ctx context.Context, dir string) (*deployment, error) {
	d := &deployment{dir: dir, pgDir: filepath.Join(dir, "postgres"), keyDir: filepath.Join(dir, "keys")}
	d.secretFile = filepath.Join(d.keyDir, "secret.key")
	var err error
	if d.issuer, err = auth.LoadOrCreateDevKey(d.keyDir); err != nil {
		return d, err
	}
	if _, err := auth.LoadOrCreateKey(d.secretFile); err != nil {
		return d, err
	}
	ports, err := freePorts(4)
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
	d.dbURL = d.pg.DatabaseURL("baton")

	d.temporalAddr = "127.0.0.1:" + strconv.Itoa(ports[1])
	d.temporal = &soak.Process{
		Name:  "temporal",
		Path:  binary,
		Args:  []string{"temporal", "--database-url", d.pg.URL(), "--listen", d.temporalAddr, "--ui-port", "0"},
		Ready: regexp.MustCompile(`^Temporal frontend: `),
	}
	if err := d.temporal.Start(2 * time.Minute); err != nil {
		return d, err
	}
	for i := range 2 {
		w := d.worker(fmt.Sprintf("worker-%d", i+1))
		if err := w.Start(time.Minute); err != nil {
			return d, err
		}
		d.workers = append(d.workers, w)
	}
	for i := range 2 {
		addr := "127.0.0.1:" + strconv.Itoa(ports[2+i])
		g := d.gateway(fmt.Sprintf("gateway-%d", i+1), addr, org)
		if err := g.Start(time.Minute); err != nil {
			return d, err
		}
		d.gateways = append(d.gateways, g)
		d.gatewayURLs = append(d.gatewayURLs, "http://"+addr+"/mcp")
	}
	return d, nil
}

// worker is a `baton worker` of this deployment, not yet started.
func (d *deployment) worker(name string) *soak.Process {
	return &soak.Process{
		Name:  name,
		Path:  binary,
		Args:  []string{"worker", "--database-url", d.dbURL, "--temporal-address", d.temporalAddr},
		Ready: regexp.MustCompile(`^Worker polling `),
	}
}

// gateway is a `baton gateway` of this deployment for an organization on
// addr, not yet started.
func (d *deployment) gateway(name, addr, org string) *soak.Process {
	return &soak.Process{
		Name: name,
		Path: binary,
		Args: []string{
			"gateway", "--database-url", d.dbURL, "--temporal-address", d.temporalAddr,
			"--listen", addr, "--org", org, "--secret-file", d.secretFile,
			"--dev-tokens", "--dev-key-dir", d.keyDir,
		},
		Ready: regexp.MustCompile(`^MCP: `),
	}
}

// startPostgres starts PostgreSQL on the deployment's data folder and
// port, the first time and after a stop.
func (d *deployment) startPostgres(ctx context.Context) error {
	pg, err := pgserver.Start(ctx, &pgserver.Options{DataDir: d.pgDir, Port: d.pgPort, NoSync: true})
	if err != nil {
		return err
	}
	d.pg = pg
	return nil
}

// restartPostgres stops PostgreSQL (fast shutdown: every session is cut),
// keeps it down for down, and starts it again on the same data and port.
// during, when given, runs while it is down.
func (d *deployment) restartPostgres(ctx context.Context, down time.Duration, during func()) error {
	if err := d.pg.Stop(); err != nil {
		return err
	}
	begin := time.Now()
	if during != nil {
		during()
	}
	time.Sleep(down - time.Since(begin))
	return d.startPostgres(ctx)
}

// procs are every process of the deployment.
func (d *deployment) procs() []*soak.Process {
	all := []*soak.Process{d.temporal}
	all = append(all, d.workers...)
	return append(all, d.gateways...)
}

// stop stops every process, then PostgreSQL.
func (d *deployment) stop() {
	for i := len(d.gateways) - 1; i >= 0; i-- {
		d.gateways[i].Stop()
	}
	for _, w := range d.workers {
		w.Stop()
	}
	if d.temporal != nil {
		d.temporal.Stop()
	}
	if d.pg != nil {
		_ = d.pg.Stop()
	}
}

// token mints the dev token of an identity.
func (d *deployment) token(w drive.Who) (string, error) {
	return d.issuer.Issue(auth.Identity{ID: w.ID, Kind: auth.Kind(w.Kind), Groups: w.Groups}, 2*time.Hour)
}

// publish imports a process folder and publishes it in an organization,
// through the command line as an operator would.
func (d *deployment) publish(folder, name, org string) error {
	for _, args := range [][]string{
		{"import", "--database-url", d.dbURL, "--org", org, folder},
		{"publish", "--database-url", d.dbURL, "--org", org, "--same-name-groups", name},
	} {
		cmd := exec.Command(binary, args...)
		cmd.Env = soak.ChildEnv()
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("baton %s: %v\n%s", strings.Join(args, " "), err, out)
		}
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

// reachableTempDir makes a temporary folder the postgres user can reach
// when the tests run as root.
func reachableTempDir() (string, error) {
	dir, err := os.MkdirTemp("", "baton-faults-")
	if err != nil {
		return "", err
	}
	return dir, os.Chmod(dir, 0o755)
}
