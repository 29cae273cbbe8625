package main

import (
	"context"
	"fmt"
	"io"

	"github.com/baton-run/baton/activities/downstream"
	"github.com/baton-run/baton/internal/store"
)

// registerTools loads the tool registration file of --tools into the
// store, replacing the organization's earlier one, and lists each server's
// tools; a server that does not answer keeps its earlier listing and is
// reported, not fatal (docs/profile-tools.md §1). An empty path loads
// nothing and reports false.
func registerTools(ctx context.Context, st *store.Store, org, path string, stdout io.Writer) (bool, error) {
	if path == "" {
		return false, nil
	}
	d, err := downstream.New(nil)
	if err != nil {
		return false, err
	}
	f, warnings, err := st.RegisterTools(ctx, org, path, d.Lister())
	if err != nil {
		return false, fmt.Errorf("--tools %s: %w", path, err)
	}
	for _, w := range warnings {
		fmt.Fprintf(stdout, "Tools: %s\n", w)
	}
	fmt.Fprintf(stdout, "Tools registered from %s: %d servers\n", path, len(f.Servers))
	return true, nil
}
