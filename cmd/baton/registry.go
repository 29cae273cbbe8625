package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/baton-run/baton/gateway"
	"github.com/baton-run/baton/interpreter"
)

// registryFlags are what import, publish and processes need.
type registryFlags struct {
	whereFlags
	by    string
	check bool
	depth int
}

func (r *registryFlags) register(fl *flag.FlagSet) {
	r.registerWhere(fl)
	stringFlag(fl, &r.by, "by", "cli", "who is importing or publishing")
	boolFlag(fl, &r.check, "check", false, "the deployment's workers have a check evaluator, so check-1 processes may be published (always so for baton dev's --data)")
}

// registerWhere registers the flags that say which registry, and the depth
// limit its process steps are checked against.
func (r *registryFlags) registerWhere(fl *flag.FlagSet) {
	r.whereFlags.register(fl)
	intFlag(fl, &r.depth, "subprocess-depth", interpreter.DefaultMaxDepth, "how many levels of processes may nest below a process (baton-subprocess-1)")
}

// open opens the registry in --database-url, else in the PostgreSQL of the
// --data folder: baton dev's running server, or one started on its cluster
// until the returned close function is called.
func (r *registryFlags) open(ctx context.Context, stderr io.Writer) (*gateway.Registry, func(), error) {
	offer := interpreter.DefaultOffer()
	// Every server offers baton-subprocess-1 (profiles).
	offer.Profiles = append(offer.Profiles, interpreter.ProfileSubprocess)
	if r.check || r.databaseURL == "" {
		// baton dev always has an evaluator (by default the unsure one).
		offer.Profiles = append(offer.Profiles, interpreter.ProfileCheck)
	}
	return r.openWith(ctx, stderr, offer)
}

// openWith is open with the offer given.
func (r *registryFlags) openWith(ctx context.Context, stderr io.Writer, offer interpreter.Offer) (*gateway.Registry, func(), error) {
	st, release, err := r.whereFlags.open(ctx, stderr)
	if err != nil {
		return nil, nil, err
	}
	if !offer.HasProfile(interpreter.ProfileTools) {
		// The deployment offers baton-tools-1 to an organization whose
		// gateways and workers stored a tool registration (--tools); its
		// processes' tools: keys are checked against it.
		servers, err := st.ToolServers(ctx, r.org)
		if err != nil {
			release()
			return nil, nil, err
		}
		if len(servers) > 0 {
			offer.Profiles = append(offer.Profiles, interpreter.ProfileTools)
		}
	}
	offer.MaxDepth = r.depth
	return gateway.NewRegistry(st, r.org, offer), release, nil
}

// registryWhere says, in each command's usage, which registry it works on.
const registryWhere = `The registry is the one in --database-url or, without it, the one of the
baton dev whose data folder is --data (default .baton): while baton dev runs,
its PostgreSQL; when it does not, the same PostgreSQL started just for this
command (a baton dev started meanwhile waits for the command to finish).
`

func parseFlags(fl *flag.FlagSet, args []string, usage string, stderr io.Writer) (int, bool) {
	fl.SetOutput(stderr)
	fl.Usage = func() { fmt.Fprint(stderr, usage); fl.PrintDefaults() }
	return parseCommand(fl.Name(), fl, args, stderr)
}

func runImport(args []string, stdout, stderr io.Writer) int {
	var rf registryFlags
	fl := flag.NewFlagSet("import", flag.ContinueOnError)
	rf.register(fl)
	if code, ok := parseFlags(fl, args, "usage: baton import [flags] DIR...\n\nImports process folders as drafts and lists the roles to bind and the systems each requires.\nA process that runs others (baton-subprocess-1) is imported after the folders\nof the processes it runs, and checked against them as published or imported.\n\n"+registryWhere+"\nFlags:\n", stderr); !ok {
		return code
	}
	if fl.NArg() == 0 {
		fmt.Fprintln(stderr, "baton import: give at least one process folder")
		return 2
	}
	ctx := context.Background()
	reg, closeStore, err := rf.open(ctx, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "baton import: %v\n", err)
		return 1
	}
	defer closeStore()
	status := 0
	for _, dir := range gateway.OrderFolders(fl.Args()) {
		d, err := reg.ImportDir(ctx, dir, rf.by)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", dir, err)
			status = 1
			continue
		}
		fmt.Fprintf(stdout, "%s: draft of %s (sha256:%s)\n", dir, d.Process.Name, d.Process.Hash)
		if len(d.Roles) > 0 {
			fmt.Fprintf(stdout, "  roles to bind: %s\n", strings.Join(d.Roles, ", "))
		}
		if d.Process.Requires != nil {
			fmt.Fprintf(stdout, "  requires systems: %s\n", strings.Join(d.Process.Requires.Systems, ", "))
		}
		if children := d.Process.Dependency().Children(); len(children) > 0 {
			fmt.Fprintf(stdout, "  runs processes: %s (bound to their latest versions at publication; publish them first)\n", strings.Join(children, ", "))
		}
	}
	return status
}

func runPublish(args []string, stdout, stderr io.Writer) int {
	var rf registryFlags
	roles := roleFlag{}
	sameName := false
	fl := flag.NewFlagSet("publish", flag.ContinueOnError)
	rf.register(fl)
	fl.Var(roles, "role", "bind ROLE=GROUP; repeatable")
	fl.BoolVar(&sameName, "same-name-groups", false, "bind roles left unbound to groups of the same name")
	if code, ok := parseFlags(fl, args, "usage: baton publish [flags] NAME...\n\nBinds roles of drafts and publishes each as its next version. A process that\nruns others (baton-subprocess-1) is published after those named with it, and\nbinds each to its latest published version. With several names, --role binds\nthe role in every draft that has it.\n\n"+registryWhere+"\nFlags:\n", stderr); !ok {
		return code
	}
	if fl.NArg() == 0 {
		fmt.Fprintln(stderr, "baton publish: give at least one process name")
		return 2
	}
	ctx := context.Background()
	reg, closeStore, err := rf.open(ctx, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "baton publish: %v\n", err)
		return 1
	}
	defer closeStore()
	names, err := reg.OrderDrafts(ctx, fl.Args())
	if err != nil {
		fmt.Fprintf(stderr, "baton publish: %v\n", err)
		return 1
	}
	if err := bindRoles(ctx, reg, names, roles); err != nil {
		fmt.Fprintf(stderr, "baton publish: %v\n", err)
		return 1
	}
	status := 0
	for _, name := range names {
		pv, err := reg.Publish(ctx, name, rf.by, sameName)
		if err != nil {
			fmt.Fprintf(stderr, "baton publish: %v\n", err)
			status = 1
			continue
		}
		fmt.Fprintf(stdout, "Published %s v%d (sha256:%s)\n", pv.Name, pv.Version, pv.Hash)
		for _, c := range pv.Children {
			fmt.Fprintf(stdout, "    %s runs %s v%d\n", c.Step, c.Process, c.Version)
		}
	}
	return status
}

// bindRoles binds --role bindings: all of them in a single draft, as
// Bind does, or in several, each role in every draft that has it, refusing
// a role none has.
func bindRoles(ctx context.Context, reg *gateway.Registry, names []string, roles map[string]string) error {
	if len(roles) == 0 {
		return nil
	}
	if len(names) == 1 {
		return reg.Bind(ctx, names[0], roles)
	}
	used := map[string]bool{}
	for _, name := range names {
		has, err := reg.DraftRoles(ctx, name)
		if err != nil {
			continue // publishing it says why
		}
		bind := map[string]string{}
		for _, role := range has {
			if g, ok := roles[role]; ok {
				bind[role] = g
				used[role] = true
			}
		}
		if len(bind) > 0 {
			if err := reg.Bind(ctx, name, bind); err != nil {
				return err
			}
		}
	}
	var unused []string
	for role := range roles {
		if !used[role] {
			unused = append(unused, role)
		}
	}
	if len(unused) > 0 {
		sort.Strings(unused)
		return fmt.Errorf("no draft of %s has role %s", strings.Join(names, ", "), strings.Join(unused, ", "))
	}
	return nil
}

func runProcesses(args []string, stdout, stderr io.Writer) int {
	var rf registryFlags
	fl := flag.NewFlagSet("processes", flag.ContinueOnError)
	rf.register(fl)
	if code, ok := parseFlags(fl, args, "usage: baton processes [flags]\n\nLists published processes at their latest version.\n\n"+registryWhere+"\nFlags:\n", stderr); !ok {
		return code
	}
	ctx := context.Background()
	reg, closeStore, err := rf.open(ctx, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "baton processes: %v\n", err)
		return 1
	}
	defer closeStore()
	list, err := reg.Latest(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "baton processes: %v\n", err)
		return 1
	}
	for _, pv := range list {
		fmt.Fprintf(stdout, "%s\tv%d\tsha256:%s\t%s\n", pv.Name, pv.Version, pv.Hash, pv.PublishedAt.Format("2006-01-02 15:04"))
		for _, c := range pv.Children {
			fmt.Fprintf(stdout, "    %s runs %s v%d\n", c.Step, c.Process, c.Version)
		}
	}
	return 0
}
