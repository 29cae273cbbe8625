package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/baton-run/baton/activities/downstream"
	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/internal/store"
)

// orgPath splits a flag value [ORG=]PATH: the organization it names, or
// def when it names none. A value whose part before the first '=' is not
// an organization id (it holds a '/', say) is a path alone.
func orgPath(v, def string) (org, path string) {
	if o, p, ok := strings.Cut(v, "="); ok && auth.CheckOrg(o) == nil && p != "" {
		return o, p
	}
	return def, v
}

// registerTools loads each tool registration file of --tools [ORG=]FILE
// into the store as the registration of its organization (def when the
// value names none), replacing that organization's earlier one, and lists
// each server's tools; a server that does not answer keeps its earlier
// listing and is reported, not fatal (docs/profile-tools.md §1). No files
// load nothing and report false. An organization given twice is refused:
// one file is one organization's whole registration.
func registerTools(ctx context.Context, st *store.Store, def string, values []string, stdout io.Writer) (bool, error) {
	if len(values) == 0 {
		return false, nil
	}
	d, err := downstream.New(nil)
	if err != nil {
		return false, err
	}
	seen := map[string]string{}
	for _, v := range values {
		org, path := orgPath(v, def)
		if prev, ok := seen[org]; ok {
			return false, fmt.Errorf("--tools names organization %s twice (%s and %s): give each organization one file", org, prev, path)
		}
		seen[org] = path
		f, warnings, err := st.RegisterTools(ctx, org, path, d.Lister())
		if err != nil {
			return false, fmt.Errorf("--tools %s: %w", v, err)
		}
		for _, w := range warnings {
			fmt.Fprintf(stdout, "Tools of %s: %s\n", org, w)
		}
		fmt.Fprintf(stdout, "Tools of %s registered from %s: %d servers\n", org, path, len(f.Servers))
	}
	return true, nil
}
