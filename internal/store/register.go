package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/baton-run/baton/internal/toolreg"
)

// This file is what --tools does with a registration file at start: store
// it as the organization's registration and refresh each server's tool
// listing (docs/profile-tools.md §1.3).

// ToolRegistration returns the organization's stored registration; a File
// without servers when none is stored.
func (s *Store) ToolRegistration(ctx context.Context, org string) (*toolreg.File, error) {
	servers, err := s.ToolServers(ctx, org)
	if err != nil {
		return nil, err
	}
	return &toolreg.File{Servers: servers}, nil
}

// RefreshToolListings lists every server of f with list, each bounded by
// its timeout, and stores each answer as the server's listing. A server
// that does not answer keeps its previous listing (docs/profile-tools.md
// §1.3). It returns one warning per server that did not answer and per
// registered tool its server does not list; the error is for the store
// alone.
func (s *Store) RefreshToolListings(ctx context.Context, org string, f *toolreg.File, list toolreg.Lister) ([]string, error) {
	var warnings []string
	for _, ts := range f.Servers {
		cctx, cancel := context.WithTimeout(ctx, ts.Timeout)
		listing, err := list(cctx, ts)
		cancel()
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("tool server %s did not list its tools (%v); its previous listing stays", ts.Name, err))
			continue
		}
		kept := make([]toolreg.ListedTool, 0, len(ts.Tools))
		for _, t := range ts.Tools {
			i := slices.IndexFunc(listing, func(l toolreg.ListedTool) bool { return l.Name == t.Name })
			if i < 0 {
				warnings = append(warnings, fmt.Sprintf("tool server %s does not list the registered tool %s; calling it gets the server's own answer", ts.Name, t.Name))
				continue
			}
			kept = append(kept, listing[i])
		}
		if err := s.SetToolListing(ctx, nil, org, ts.Name, ts.URL, kept, time.Now()); err != nil {
			if errors.Is(err, ErrNotFound) {
				warnings = append(warnings, fmt.Sprintf("tool server %s changed while it was listed; its listing was not kept", ts.Name))
				continue
			}
			return warnings, err
		}
	}
	return warnings, nil
}

// RegisterTools is what --tools does at start: it reads and validates the
// registration file at path, stores it as the organization's registration
// (replacing the one before), and refreshes each server's tool listing
// with list (nil lists nothing). It returns the file and
// RefreshToolListings' warnings, to log; a refused file changes nothing.
func (s *Store) RegisterTools(ctx context.Context, org, path string, list toolreg.Lister) (*toolreg.File, []string, error) {
	f, err := toolreg.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	if err := s.PutToolServers(ctx, nil, org, f.Servers); err != nil {
		return nil, nil, err
	}
	if list == nil {
		return f, nil, nil
	}
	warnings, err := s.RefreshToolListings(ctx, org, f, list)
	if err != nil {
		return nil, warnings, err
	}
	return f, warnings, nil
}
