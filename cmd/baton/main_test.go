package main

import (
	"os"
	"testing"

	"github.com/baton-run/baton/internal/testing/pgtest"
)

// TestMain stops the shared PostgreSQL that tests of `baton dev` use.
func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}
