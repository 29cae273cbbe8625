package toolreg

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/interpreter"
)

// Save stores f as the organization's registration, replacing the one
// before: a server or tool not in f can no longer be called.
func Save(ctx context.Context, st *store.Store, org string, f *File) error {
	return st.PutToolServers(ctx, nil, org, Rows(f))
}

// Rows returns f as the store keeps it.
func Rows(f *File) []store.ToolServer {
	if f == nil {
		return nil
	}
	rows := make([]store.ToolServer, 0, len(f.Servers))
	for _, s := range f.Servers {
		row := store.ToolServer{Name: s.Name, URL: s.URL, TestURL: s.TestURL, Timeout: s.Timeout}
		if c := s.Credentials; c != nil {
			row.Credentials = &store.ToolCredentials{Env: c.Env, File: c.File, Header: c.Header, Scheme: c.Scheme}
		}
		for _, t := range s.Tools {
			row.Tools = append(row.Tools, store.ToolPolicy{
				Tool: t.Name, Policy: string(t.Policy), Idempotency: string(t.Idempotency),
				Approvers: slices.Clone(t.Approvers), ApprovalSLA: t.ApprovalSLA,
			})
		}
		rows = append(rows, row)
	}
	return rows
}

// Load returns the organization's stored registration; a File without
// servers when none is stored.
func Load(ctx context.Context, st *store.Store, org string) (*File, error) {
	rows, err := st.ToolServers(ctx, org)
	if err != nil {
		return nil, err
	}
	return FromRows(rows), nil
}

// FromRows returns stored rows as a File.
func FromRows(rows []store.ToolServer) *File {
	f := &File{}
	for _, r := range rows {
		s := Server{Name: r.Name, URL: r.URL, TestURL: r.TestURL, Timeout: r.Timeout}
		if c := r.Credentials; c != nil {
			s.Credentials = &Credentials{Env: c.Env, File: c.File, Header: c.Header, Scheme: c.Scheme}
		}
		for _, t := range r.Tools {
			s.Tools = append(s.Tools, Tool{
				Name: t.Tool, Policy: interpreter.Policy(t.Policy), Idempotency: interpreter.Idempotency(t.Idempotency),
				Approvers: slices.Clone(t.Approvers), ApprovalSLA: t.ApprovalSLA,
			})
		}
		f.Servers = append(f.Servers, s)
	}
	return f
}

// Lister lists one server's tools (a tools/list call); the downstream
// client is one (activities/downstream).
type Lister func(ctx context.Context, s Server) ([]store.ListedTool, error)

// Refresh lists every server of f with list, each bounded by its timeout,
// and stores each answer as the server's listing. A server that does not
// answer keeps its previous listing (docs/profile-tools.md §1.3). It
// returns one warning per server that did not answer and per registered
// tool its server does not list; the error is for the store alone.
func Refresh(ctx context.Context, st *store.Store, org string, f *File, list Lister) ([]string, error) {
	var warnings []string
	for _, s := range f.Servers {
		cctx, cancel := context.WithTimeout(ctx, s.Timeout)
		listing, err := list(cctx, s)
		cancel()
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("tool server %s did not list its tools (%v); its previous listing stays", s.Name, err))
			continue
		}
		kept := make([]store.ListedTool, 0, len(s.Tools))
		for _, t := range s.Tools {
			i := slices.IndexFunc(listing, func(l store.ListedTool) bool { return l.Name == t.Name })
			if i < 0 {
				warnings = append(warnings, fmt.Sprintf("tool server %s does not list the registered tool %s; calling it gets the server's own answer", s.Name, t.Name))
				continue
			}
			kept = append(kept, listing[i])
		}
		if err := st.SetToolListing(ctx, nil, org, s.Name, s.URL, kept, time.Now()); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				warnings = append(warnings, fmt.Sprintf("tool server %s changed while it was listed; its listing was not kept", s.Name))
				continue
			}
			return warnings, err
		}
	}
	return warnings, nil
}

// Register is what --tools does at start: it reads and validates the
// registration file at path, stores it as the organization's registration
// (replacing the one before), and refreshes each server's tool listing
// with list (nil lists nothing). It returns the file and Refresh's
// warnings, to log; a refused file changes nothing.
func Register(ctx context.Context, st *store.Store, org, path string, list Lister) (*File, []string, error) {
	f, err := ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	if err := Save(ctx, st, org, f); err != nil {
		return nil, nil, err
	}
	if list == nil {
		return f, nil, nil
	}
	warnings, err := Refresh(ctx, st, org, f, list)
	if err != nil {
		return nil, warnings, err
	}
	return f, warnings, nil
}
