package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/interpreter"
)

// This file binds process steps (baton-subprocess-1,
// docs/profile-subprocess.md §1) to the published versions of the
// organization's processes, and publishes folders children first.

// catalog loads what the process steps of d name, and what those name in
// turn, as far as processes may nest, from this organization's registry.
// With drafts, a process that has a draft stands in by its draft for the
// latest version (baton import, before the children are published).
func (r *Registry) catalog(ctx context.Context, d interpreter.Dependency, drafts bool) (*interpreter.Catalog, error) {
	where := "published in this organization"
	if drafts {
		where = "published or imported in this organization"
	}
	cat := interpreter.NewCatalog(where)
	depth := r.offer.MaxDepth
	if depth <= 0 {
		depth = interpreter.DefaultMaxDepth
	}
	refs := d.Refs
	seen := map[interpreter.ProcessRef]bool{}
	latestSeen := map[string]bool{}
	// One level more than may nest, so a process one level too deep is
	// seen to be.
	for level := 0; level <= depth+1 && len(refs) > 0; level++ {
		var next []interpreter.ProcessRef
		for _, ref := range refs {
			if seen[ref] || ref.Name == d.Name && level == 0 {
				continue
			}
			seen[ref] = true
			if !latestSeen[ref.Name] {
				latestSeen[ref.Name] = true
				found, err := r.addLatest(ctx, cat, ref.Name, drafts)
				if err != nil {
					return nil, err
				}
				if found != nil && ref.Version == 0 {
					for _, b := range found.Children {
						next = append(next, interpreter.ProcessRef{Name: b.Process, Version: b.Version})
					}
				}
			}
			if ref.Version == 0 {
				continue
			}
			pv, err := r.store.GetVersion(ctx, r.org, ref.Name, ref.Version)
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			if err != nil {
				return nil, err
			}
			e, err := catalogEntry(pv)
			if err != nil {
				return nil, err
			}
			cat.Add(e, false)
			for _, b := range e.Children {
				next = append(next, interpreter.ProcessRef{Name: b.Process, Version: b.Version})
			}
		}
		refs = next
	}
	return cat, nil
}

// addLatest adds a process's latest version (or, with drafts, its draft
// when it has one) and returns it; nil when it has neither.
func (r *Registry) addLatest(ctx context.Context, cat *interpreter.Catalog, name string, drafts bool) (*interpreter.CatalogEntry, error) {
	if drafts {
		d, err := r.store.GetDraft(ctx, r.org, name)
		switch {
		case err == nil:
			p := &interpreter.Process{}
			if err := json.Unmarshal(d.Definition, p); err != nil {
				return nil, fmt.Errorf("draft of %s: %w", name, err)
			}
			e := interpreter.CatalogEntry{Process: p}
			cat.Add(e, true)
			return &e, nil
		case !errors.Is(err, store.ErrNotFound):
			return nil, err
		}
	}
	pv, err := r.store.GetVersion(ctx, r.org, name, 0)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	e, err := catalogEntry(pv)
	if err != nil {
		return nil, err
	}
	cat.Add(e, true)
	return &e, nil
}

func catalogEntry(pv store.ProcessVersion) (interpreter.CatalogEntry, error) {
	p := &interpreter.Process{}
	if err := json.Unmarshal(pv.Definition, p); err != nil {
		return interpreter.CatalogEntry{}, fmt.Errorf("process %s v%d: %w", pv.Name, pv.Version, err)
	}
	return interpreter.CatalogEntry{Process: p, Version: pv.Version, Children: pv.Children}, nil
}

// withProcesses returns offer with the catalog that the process steps of
// src need; offer unchanged when it has none.
func (r *Registry) withProcesses(ctx context.Context, offer interpreter.Offer, src []byte, drafts bool) (interpreter.Offer, error) {
	d, ok := interpreter.ReadDependency(src)
	if !ok || len(d.Refs) == 0 || !offer.HasProfile(interpreter.ProfileSubprocess) {
		return offer, nil
	}
	cat, err := r.catalog(ctx, d, drafts)
	if err != nil {
		return offer, err
	}
	offer.Processes = cat
	return offer, nil
}

// Check checks a PROCESS.md as publishing it now would, against what this
// server offers and this organization's published processes, and returns
// the child bindings it would get. It stores nothing. folder, when not
// empty, must equal the process's name.
func (r *Registry) Check(ctx context.Context, src []byte, folder string) (*interpreter.Process, interpreter.Bindings, error) {
	offer, err := r.currentOffer(ctx)
	if err != nil {
		return nil, nil, err
	}
	if offer, err = r.withProcesses(ctx, offer, src, false); err != nil {
		return nil, nil, err
	}
	return interpreter.ParseAndBind(src, &interpreter.ParseOptions{Folder: folder, Offer: &offer})
}

// Folder is one process folder's outcome of ImportAndPublishFolders.
type Folder struct {
	Dir     string
	Version store.ProcessVersion
	Draft   *Draft
	// Err says why the folder was not published; nil when it was.
	Err error
}

// ImportAndPublishFolders imports and publishes process folders as
// ImportAndPublish does each, every child before the processes that name
// it (baton dev --processes). A folder that fails does not stop the rest;
// a parent of a child that failed is then refused as naming an
// unpublished process.
func (r *Registry) ImportAndPublishFolders(ctx context.Context, dirs []string, by string, roles map[string]string) []Folder {
	out := make([]Folder, 0, len(dirs))
	for _, dir := range OrderFolders(dirs) {
		pv, d, err := r.ImportAndPublish(ctx, dir, by, roles)
		out = append(out, Folder{Dir: dir, Version: pv, Draft: d, Err: err})
	}
	return out
}

// OrderFolders orders process folders so that every child comes before
// the processes that name it. A folder whose PROCESS.md cannot be read
// comes last: importing it says why.
func OrderFolders(dirs []string) []string {
	var deps []interpreter.Dependency
	var read, unread []string
	for _, dir := range dirs {
		src, err := os.ReadFile(filepath.Join(dir, "PROCESS.md"))
		d, ok := interpreter.ReadDependency(src)
		if err != nil || !ok {
			unread = append(unread, dir)
			continue
		}
		deps = append(deps, d)
		read = append(read, dir)
	}
	order, _ := interpreter.PublishOrder(deps)
	out := make([]string, 0, len(dirs))
	for _, k := range order {
		out = append(out, read[k])
	}
	return append(out, unread...)
}

// OrderDrafts orders the names of drafts so that every child comes before
// the processes that name it (baton publish NAME...). A name without a
// draft keeps its place among the rest: publishing it says why.
func (r *Registry) OrderDrafts(ctx context.Context, names []string) ([]string, error) {
	deps := make([]interpreter.Dependency, len(names))
	for k, name := range names {
		deps[k] = interpreter.Dependency{Name: name}
		d, err := r.store.GetDraft(ctx, r.org, name)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var p interpreter.Process
		if err := json.Unmarshal(d.Definition, &p); err != nil {
			return nil, err
		}
		deps[k] = p.Dependency()
	}
	order, _ := interpreter.PublishOrder(deps)
	out := make([]string, len(order))
	for k, i := range order {
		out[k] = names[i]
	}
	return out, nil
}

// DraftRoles returns the role names of a draft, to bind.
func (r *Registry) DraftRoles(ctx context.Context, name string) ([]string, error) {
	d, err := r.store.GetDraft(ctx, r.org, name)
	if err != nil {
		return nil, err
	}
	var p interpreter.Process
	if err := json.Unmarshal(d.Definition, &p); err != nil {
		return nil, err
	}
	return p.Roles(), nil
}
