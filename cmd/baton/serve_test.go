package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.temporal.io/sdk/client"

	"github.com/baton-run/baton/gateway/auth"
)

// Nothing listens on port 1, so a command that gets as far as connecting
// fails at once.
var unreachable = []string{"--database-url", "postgres://postgres@127.0.0.1:1/x?sslmode=disable", "--temporal-address", "127.0.0.1:1"}

func gatewayArgs(extra ...string) []string {
	return append(append([]string{"gateway"}, unreachable...), extra...)
}

// noDevKey fails when dir holds a dev key: refused configurations create
// nothing.
func noDevKey(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, auth.DevKeyFile)); err == nil {
		t.Errorf("a dev key was created in %s", dir)
	}
}

// Dev tokens and an issuer's JWTs are two ways to authenticate callers;
// given both, the gateway refuses to start rather than pick one.
func TestGatewayRefusesDevKeysBesideJWKS(t *testing.T) {
	jwks := []string{"--jwks-url", "https://idp.example.com/jwks", "--issuer", "https://idp.example.com/"}
	t.Run("flag", func(t *testing.T) {
		dir := t.TempDir()
		code, _, stderr := runBaton(gatewayArgs(append(jwks, "--dev-key-dir", dir, "--dev-tokens")...)...)
		if code != 2 || !strings.Contains(stderr, "--jwks-url") || !strings.Contains(stderr, "--dev-tokens") {
			t.Errorf("exit %d, stderr %q; want 2 naming --jwks-url and --dev-tokens", code, stderr)
		}
		noDevKey(t, dir)
	})
	t.Run("environment", func(t *testing.T) {
		dir := t.TempDir()
		t.Setenv("BATON_DEV_KEY_DIR", dir)
		code, _, stderr := runBaton(gatewayArgs(jwks...)...)
		if code != 2 || !strings.Contains(stderr, "BATON_DEV_KEY_DIR") {
			t.Errorf("exit %d, stderr %q; want 2 naming BATON_DEV_KEY_DIR", code, stderr)
		}
		noDevKey(t, dir)
	})
}

// BATON_DEV_KEY_DIR alone no longer switches a gateway to dev tokens: that
// takes --dev-tokens, which warns loudly, and a key that already exists.
func TestGatewayDevTokensOnlyWhenAskedFor(t *testing.T) {
	t.Run("key dir alone", func(t *testing.T) {
		dir := t.TempDir()
		t.Setenv("BATON_DEV_KEY_DIR", dir)
		code, _, stderr := runBaton(gatewayArgs()...)
		if code != 2 || !strings.Contains(stderr, "--dev-tokens") {
			t.Errorf("exit %d, stderr %q; want 2 naming --dev-tokens", code, stderr)
		}
		noDevKey(t, dir)
	})
	t.Run("no key yet", func(t *testing.T) {
		dir := t.TempDir()
		code, _, stderr := runBaton(gatewayArgs("--dev-tokens", "--dev-key-dir", dir)...)
		if code == 0 || !strings.Contains(stderr, "baton token --data") {
			t.Errorf("exit %d, stderr %q; want a failure saying how to make the key", code, stderr)
		}
		noDevKey(t, dir)
	})
	t.Run("warns", func(t *testing.T) {
		dir := t.TempDir()
		if _, err := auth.LoadOrCreateDevKey(dir); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := runBaton(gatewayArgs("--dev-tokens", "--dev-key-dir", dir)...)
		if code != 1 || !strings.Contains(stderr, "connect to Temporal") {
			t.Errorf("exit %d, stderr %q; want 1 from connecting to Temporal", code, stderr)
		}
		if !strings.Contains(stderr, "level=WARN") || !strings.Contains(stderr, "DEV TOKENS") {
			t.Errorf("no loud warning about dev tokens in %q", stderr)
		}
	})
}

// Settings out of range stop the gateway before it connects to anything.
func TestGatewayRefusesSettingsOutOfRange(t *testing.T) {
	t.Parallel()
	jwks := []string{"--jwks-url", "https://idp.example.com/jwks", "--issuer", "https://idp.example.com/"}
	for _, tt := range []struct{ flag, value string }{
		{"--request-retention", "1h"},
		{"--max-requests", "0"},
		{"--subprocess-children", "0"},
		{"--upload-quota-bytes", "-5"},
		{"--lease", "10ms"},
		{"--call-wait", "0s"},
		{"--call-wait", "5m"},
	} {
		code, _, stderr := runBaton(gatewayArgs(append(jwks, tt.flag, tt.value)...)...)
		if code != 2 || !strings.Contains(stderr, tt.flag) {
			t.Errorf("%s %s: exit %d, stderr %q; want 2 naming the flag", tt.flag, tt.value, code, stderr)
		}
	}
}

func TestTemporalCompression(t *testing.T) {
	for _, tc := range []struct {
		mode, address string
		want          client.GrpcCompression
	}{
		{"auto", "127.0.0.1:7233", &client.GrpcCompressionNone{}},
		{"auto", "[::1]:7233", &client.GrpcCompressionNone{}},
		{"auto", "localhost:7233", &client.GrpcCompressionNone{}},
		{"", "127.0.0.2:7233", &client.GrpcCompressionNone{}},
		{"auto", "temporal.internal:7233", &client.GrpcCompressionGzip{}},
		{"auto", "10.0.0.5:7233", &client.GrpcCompressionGzip{}},
		{"auto", "my-ns.tmprl.cloud:7233", &client.GrpcCompressionGzip{}},
		{"gzip", "127.0.0.1:7233", &client.GrpcCompressionGzip{}},
		{"none", "temporal.internal:7233", &client.GrpcCompressionNone{}},
	} {
		got, err := temporalCompression(tc.mode, tc.address)
		if err != nil || reflect.TypeOf(got) != reflect.TypeOf(tc.want) {
			t.Errorf("temporalCompression(%q, %q) = %T, %v; want %T", tc.mode, tc.address, got, err, tc.want)
		}
	}
	if _, err := temporalCompression("zstd", "127.0.0.1:7233"); err == nil || !strings.Contains(err.Error(), "want gzip, none or auto") {
		t.Errorf("an unknown mode: %v", err)
	}
}
