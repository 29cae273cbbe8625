package main

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/gateway/oauth"
	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/internal/testing/pgtest"
	"github.com/baton-run/baton/interpreter"
)

// baton dev hands out 30-day tokens in the clear; listening beyond loopback
// must not go unnoticed.
func TestDevWarnsWhenListeningBeyondLoopback(t *testing.T) {
	t.Parallel()
	for _, listen := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.0.2.7:0"} {
		code, _, stderr := runBaton("dev", "--listen", listen, "--data", t.TempDir(), "--database-url", unreachable[1])
		if code != 1 {
			t.Errorf("%s: exit %d, want 1 (the database is unreachable)", listen, code)
		}
		if !strings.Contains(stderr, "level=WARN") || !strings.Contains(stderr, "BEYOND THIS MACHINE") {
			t.Errorf("%s: no loud warning in %q", listen, stderr)
		}
	}
	for _, listen := range []string{"127.0.0.1:0", "localhost:0", "[::1]:0"} {
		_, _, stderr := runBaton("dev", "--listen", listen, "--data", t.TempDir(), "--database-url", unreachable[1])
		if strings.Contains(stderr, "BEYOND THIS MACHINE") {
			t.Errorf("%s: warned about a loopback address: %q", listen, stderr)
		}
	}
}

// --temporal-store: PostgreSQL by default, SQLite on request, and a data
// folder whose Temporal state is in SQLite keeps it there.
func TestDevTemporalStore(t *testing.T) {
	t.Parallel()
	code, _, stderr := runBaton("dev", "--temporal-store", "mysql", "--data", filepath.Join(t.TempDir(), "never"))
	if code != 2 || !strings.Contains(stderr, "--temporal-store") {
		t.Errorf("--temporal-store mysql: exit %d, stderr %q; want 2 naming the flag", code, stderr)
	}

	data := pgtest.DataDir(t)
	cfg := devConfigFor(data)
	cfg.temporalStore = storeSQLite
	dev := launchDev(t, cfg)
	if !strings.Contains(dev.printed, "state in sqlite") {
		t.Errorf("--temporal-store sqlite printed:\n%s", dev.printed)
	}
	dev.stop()
	if _, err := os.Stat(filepath.Join(data, sqliteFile)); err != nil {
		t.Fatalf("--temporal-store sqlite made no %s: %v", sqliteFile, err)
	}
	dev = launchDev(t, devConfigFor(data))
	if !strings.Contains(dev.printed, "state in sqlite") {
		t.Errorf("a data folder with a %s, no --temporal-store, printed:\n%s", sqliteFile, dev.printed)
	}
}

// Two baton dev on one machine, started at once, each given only its own
// --data, --listen, --temporal-port and --ui-port: every other port either
// opens (OAuth sign-in, inbox, metrics, PostgreSQL) follows from those or
// is free, so both serve a tool call, an OAuth discovery and their metrics.
func TestTwoDevSideBySide(t *testing.T) {
	var waits []func() *devRun
	var datas []string
	for range 2 {
		data := pgtest.DataDir(t)
		datas = append(datas, data)
		var cfg devConfig
		fl := flag.NewFlagSet("dev", flag.PanicOnError)
		devFlags(fl, &cfg)
		fl.Parse([]string{"--data", data, "--listen", "127.0.0.1:" + freePortString(t),
			"--temporal-port", freePortString(t), "--ui-port", freePortString(t)})
		waits = append(waits, goDev(t, cfg))
	}
	devs := []*devRun{waits[0](), waits[1]()}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i, d := range devs {
		base := strings.TrimSuffix(d.mcpURL, "/mcp")
		var desc struct {
			Version  string   `json:"version"`
			Profiles []string `json:"profiles"`
		}
		// baton dev offers sub-processes: the runtime runs children.
		if err := devDriver(t, datas[i], d.mcpURL).Call(ctx, drive.WalkAgent, "describe", nil, &desc); err != nil || desc.Version != "core-2" ||
			!slices.Contains(desc.Profiles, interpreter.ProfileParallel) || !slices.Contains(desc.Profiles, interpreter.ProfileSubprocess) {
			t.Errorf("dev %d: describe: %v %+v", i, err, desc)
		}
		// OAuth discovery, as a client does it from the MCP URL alone.
		resp, err := http.Post(d.mcpURL, "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), base+auth.MetadataPath) {
			t.Errorf("dev %d: POST /mcp without a token: %d %q", i, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
		var prm struct {
			AuthorizationServers []string `json:"authorization_servers"`
		}
		getJSON(t, base+auth.MetadataPath, &prm)
		if len(prm.AuthorizationServers) != 1 || prm.AuthorizationServers[0] != d.asURL || !strings.HasPrefix(d.asURL, base+"/") {
			t.Fatalf("dev %d: authorization servers %v, printed %q; want one on the gateway's listener %s", i, prm.AuthorizationServers, d.asURL, base)
		}
		var asm oauth.Metadata
		getJSON(t, base+oauth.MetadataPath+strings.TrimPrefix(d.asURL, base), &asm)
		if asm.Issuer != d.asURL || asm.TokenEndpoint != d.asURL+oauth.TokenPath {
			t.Errorf("dev %d: authorization server metadata %+v", i, asm)
		}
		if d.metricsURL == "" {
			t.Errorf("dev %d printed no metrics URL:\n%s", i, d.printed)
		} else if m := scrapeMetrics(t, d.metricsURL); m["baton_tool_calls_total"].sum(map[string]string{"tool": "describe"}) != 1 {
			t.Errorf("dev %d: its metrics do not count its one describe", i)
		}
	}
	if devs[0].metricsURL == devs[1].metricsURL {
		t.Errorf("both dev serve metrics at %s", devs[0].metricsURL)
	}
}

// getJSON GETs url and decodes its 200 answer into v.
func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

// baton dev listening beyond loopback keeps its warning and serves tool
// calls with the printed tokens, but offers no password-less sign-in: the
// inbox and the OAuth server refuse with a message saying why, and the
// gateway's metadata names no authorization server.
func TestDevSignInOffBeyondLoopback(t *testing.T) {
	data := pgtest.DataDir(t)
	cfg := devConfigFor(data, "--listen", "0.0.0.0:0")
	cfg.databaseURL = pgtest.NewDatabase(t)
	d := launchDev(t, cfg)
	if d.asURL != "" || d.inboxURL != "" || !strings.Contains(d.printed, "Dev sign-in: off") {
		t.Fatalf("baton dev --listen 0.0.0.0 printed:\n%s", d.printed)
	}
	base := strings.TrimSuffix(d.mcpURL, "/mcp")
	for _, p := range []string{"/inbox/", "/inbox/signin", "/oauth/authorize", "/oauth/register"} {
		resp, err := http.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "dev sign-in (web inbox and OAuth) is off") {
			t.Errorf("GET %s: %d %q", p, resp.StatusCode, body)
		}
	}
	var prm struct {
		AuthorizationServers []string `json:"authorization_servers"`
	}
	getJSON(t, base+auth.MetadataPath, &prm)
	if len(prm.AuthorizationServers) != 0 {
		t.Errorf("authorization servers %v beyond loopback", prm.AuthorizationServers)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := devDriver(t, data, d.mcpURL).Call(ctx, drive.WalkAgent, "describe", nil, nil); err != nil {
		t.Errorf("describe with a dev token: %v", err)
	}
}
