package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/interpreter"
)

// Registry imports, binds and publishes processes (spec §7): import makes
// a draft, every role name is bound to a group, and publishing makes the
// next numbered version, which never changes.
type Registry struct {
	store *store.Store
	org   string
	offer interpreter.Offer
}

// NewRegistry returns the registry of an organization, refusing processes
// that need a profile or tool the offer lacks. When the offer includes
// baton-tools-1 without a ToolCatalog, a process's tools: key is checked
// against the organization's stored tool registration as it stands at
// import and again at publication.
func NewRegistry(s *store.Store, org string, offer interpreter.Offer) *Registry {
	return &Registry{store: s, org: org, offer: offer}
}

// currentOffer returns the offer with the tool registration filled in.
func (r *Registry) currentOffer(ctx context.Context) (interpreter.Offer, error) {
	offer := r.offer
	if offer.HasProfile(interpreter.ProfileTools) && offer.ToolCatalog == nil {
		f, err := r.store.ToolRegistration(ctx, r.org)
		if err != nil {
			return offer, err
		}
		offer.ToolCatalog = f.Catalog()
	}
	return offer, nil
}

// Draft is an imported process waiting to be published.
type Draft struct {
	Process *interpreter.Process
	// Roles are the role names the importer must bind to groups.
	Roles []string
	// Bound holds the bindings made so far.
	Bound map[string]string
}

// ImportDir imports a process folder: its PROCESS.md, whose name must match
// the folder's.
func (r *Registry) ImportDir(ctx context.Context, dir, by string) (*Draft, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	src, err := os.ReadFile(filepath.Join(abs, "PROCESS.md"))
	if err != nil {
		return nil, fmt.Errorf("import %s: %w", dir, err)
	}
	return r.Import(ctx, src, filepath.Base(abs), by)
}

// MaxProcessBytes caps the size of a PROCESS.md the registry imports. The
// specification sets no limit; a process is a page or two of text. A run
// carries its process by value, parsed and without its canonical
// frontmatter, in the one payload that starts it and continues it as new
// (where Temporal refuses past 2 MiB); the gateway adds the body to run
// views and claims: at 256 KiB the largest process, beside the largest
// run, still fits.
const MaxProcessBytes = 256 << 10

// Import validates a PROCESS.md against what this server offers and makes
// it the process's draft. folder, when not empty, must equal its name.
func (r *Registry) Import(ctx context.Context, src []byte, folder, by string) (*Draft, error) {
	if len(src) > MaxProcessBytes {
		return nil, fmt.Errorf("PROCESS.md is %d bytes; the most this server imports is %d", len(src), MaxProcessBytes)
	}
	offer, err := r.currentOffer(ctx)
	if err != nil {
		return nil, err
	}
	// Process steps are checked against the children as they stand:
	// published, or imported and not yet published.
	if offer, err = r.withProcesses(ctx, offer, src, true); err != nil {
		return nil, err
	}
	p, err := interpreter.Parse(src, &interpreter.ParseOptions{Folder: folder, Offer: &offer})
	if err != nil {
		return nil, err
	}
	def, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	d := store.Draft{Org: r.org, Name: p.Name, Source: string(src), Definition: def, Hash: p.Hash, ImportedBy: by, Roles: map[string]string{}}
	if err := r.store.PutDraft(ctx, nil, d); err != nil {
		return nil, err
	}
	return &Draft{Process: p, Roles: p.Roles(), Bound: map[string]string{}}, nil
}

// Bind binds role names of a draft to groups. Unknown role names are
// refused, so a typo does not go unnoticed.
func (r *Registry) Bind(ctx context.Context, name string, roles map[string]string) error {
	d, err := r.store.GetDraft(ctx, r.org, name)
	if err != nil {
		return err
	}
	var p interpreter.Process
	if err := json.Unmarshal(d.Definition, &p); err != nil {
		return err
	}
	known := map[string]bool{}
	for _, role := range p.Roles() {
		known[role] = true
	}
	bound := map[string]string{}
	for k, v := range d.Roles {
		bound[k] = v
	}
	var unknown []string
	for role, group := range roles {
		if !known[role] {
			unknown = append(unknown, role)
			continue
		}
		if strings.TrimSpace(group) == "" {
			return fmt.Errorf("role %q: a group is required", role)
		}
		bound[role] = group
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return fmt.Errorf("process %s has no role %s (its roles: %s)", name, strings.Join(unknown, ", "), strings.Join(p.Roles(), ", "))
	}
	return r.store.SetDraftRoles(ctx, nil, r.org, name, bound)
}

// ErrUnboundRoles is returned when publishing a draft with roles not bound
// to a group.
var ErrUnboundRoles = errors.New("every role must be bound to a group before publishing")

// Publish publishes a draft as the process's next version. With
// sameNameGroups, roles left unbound are bound to the group of the same
// name first.
func (r *Registry) Publish(ctx context.Context, name, by string, sameNameGroups bool) (store.ProcessVersion, error) {
	d, err := r.store.GetDraft(ctx, r.org, name)
	if err != nil {
		return store.ProcessVersion{}, err
	}
	var p interpreter.Process
	if err := json.Unmarshal(d.Definition, &p); err != nil {
		return store.ProcessVersion{}, err
	}
	var children interpreter.Bindings
	if p.UsesTools() || p.UsesProcesses() {
		// The tool registration may have changed since the import, and
		// process steps bind to the children published now: check the
		// draft against both as they stand.
		if _, children, err = r.Check(ctx, []byte(d.Source), ""); err != nil {
			return store.ProcessVersion{}, fmt.Errorf("publish %s: %w", name, err)
		}
	}
	var unbound []string
	for _, role := range p.Roles() {
		if d.Roles[role] == "" {
			unbound = append(unbound, role)
		}
	}
	if len(unbound) > 0 {
		if !sameNameGroups {
			return store.ProcessVersion{}, fmt.Errorf("publish %s: %w: %s", name, ErrUnboundRoles, strings.Join(unbound, ", "))
		}
		bind := map[string]string{}
		for _, role := range unbound {
			bind[role] = role
		}
		if err := r.Bind(ctx, name, bind); err != nil {
			return store.ProcessVersion{}, err
		}
		if d, err = r.store.GetDraft(ctx, r.org, name); err != nil {
			return store.ProcessVersion{}, err
		}
	}
	latest, err := r.store.GetVersion(ctx, r.org, name, 0)
	if err == nil && latest.Hash == d.Hash && equalRoles(latest.Roles, d.Roles) && slices.Equal(latest.Children, children) {
		// Publishing the same content with the same bindings again makes
		// no new version.
		return latest, nil
	}
	return r.store.Publish(ctx, nil, r.org, name, by, children)
}

func equalRoles(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// ImportAndPublish imports a folder and publishes it at once, binding
// roles by the given map and the rest to groups of the same name. It is
// what `baton dev --processes` does.
func (r *Registry) ImportAndPublish(ctx context.Context, dir, by string, roles map[string]string) (store.ProcessVersion, *Draft, error) {
	d, err := r.ImportDir(ctx, dir, by)
	if err != nil {
		return store.ProcessVersion{}, nil, err
	}
	bind := map[string]string{}
	for _, role := range d.Roles {
		if g, ok := roles[role]; ok {
			bind[role] = g
		}
	}
	if len(bind) > 0 {
		if err := r.Bind(ctx, d.Process.Name, bind); err != nil {
			return store.ProcessVersion{}, d, err
		}
	}
	pv, err := r.Publish(ctx, d.Process.Name, by, true)
	return pv, d, err
}

// Latest lists every published process at its latest version.
func (r *Registry) Latest(ctx context.Context) ([]store.ProcessVersion, error) {
	var out []store.ProcessVersion
	cursor := ""
	for {
		page, next, err := r.store.ListProcesses(ctx, r.org, 100, cursor)
		if err != nil {
			return nil, err
		}
		out = append(out, page...)
		if next == "" {
			return out, nil
		}
		cursor = next
	}
}
