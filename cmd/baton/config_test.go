package main

import (
	"strings"
	"testing"
)

// A BATON_* value that does not parse stops the command with a message
// naming the variable, instead of falling back to the default.
func TestBadEnvironmentValuesAreRefused(t *testing.T) {
	tests := []struct {
		name, env, value string
		args             []string
	}{
		{"gateway duration", "BATON_LEASE", "ten minutes", gatewayArgs()},
		{"gateway int", "BATON_MAX_UPLOAD_BYTES", "10MB", gatewayArgs()},
		{"dev int", "BATON_TEMPORAL_PORT", "seven", []string{"dev", "--data", "", "--database-url", unreachable[1]}},
		{"token duration", "BATON_TTL", "1 day", []string{"token", "--agent", "a_x", "--data", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i, a := range tt.args {
				if a == "" && i > 0 && tt.args[i-1] == "--data" {
					tt.args[i] = t.TempDir()
				}
			}
			t.Setenv(tt.env, tt.value)
			code, _, stderr := runBaton(tt.args...)
			if code != 2 || !strings.Contains(stderr, tt.env) || !strings.Contains(stderr, tt.value) {
				t.Errorf("exit %d, stderr %q; want 2 naming %s=%q", code, stderr, tt.env, tt.value)
			}
		})
	}
}

// A flag on the command line wins over its variable, even a bad one.
func TestFlagWinsOverBadEnvironment(t *testing.T) {
	t.Setenv("BATON_LEASE", "ten minutes")
	code, _, stderr := runBaton(gatewayArgs("--lease", "5m", "--jwks-url", "https://idp.example.com/jwks", "--issuer", "https://idp.example.com/")...)
	if strings.Contains(stderr, "BATON_LEASE") {
		t.Errorf("exit %d, stderr %q: the variable was read though --lease was given", code, stderr)
	}
}
