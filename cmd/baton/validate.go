package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/baton-run/baton/gateway"
	"github.com/baton-run/baton/internal/toolreg"
	"github.com/baton-run/baton/interpreter"
)

const validateUsage = `usage: baton validate [--json] [--profiles LIST] [--evaluator] [--tools FILE]
                      [--data DIR | --database-url URL] [--org ORG] PATH...

Checks each PROCESS.md against the specification and prints its content hash.
With --tools, the tool registration file (profile baton-tools-1) is checked
too, and an agent step's tools: key is checked against it.

A process step (profile baton-subprocess-1) is checked against the process it
runs: among the PATHs given (several folders at once, each child before the
processes that name it), or, with --data or --database-url, against the
processes published in the registry's organization --org. Each valid process
step is listed below its process with what it was checked against:
    screen_each runs supplier-screening, folder examples/rfp/supplier-screening
    screen_each runs supplier-screening v3, published in o_default

A PATH is a process folder or a file. For a folder, its PROCESS.md is read and
the process name must equal the folder's name. For a file named PROCESS.md the
same holds for the folder it is in; a file with any other name (a draft) is
checked without a folder name.

Output, one line per PATH when valid and one per issue when not:
  PATH: ok NAME sha256:HEX
  PATH:LINE:COL: message
With --json, one JSON array of {path, name, hash, issues: [{line, column,
message}], children: [{step, process, version, hash, from}]}; hash is
lowercase hex, name and hash are "" when refused; from is "folder PATH" or
"registry ORG", version 0 for a folder.

Exit status: 0 when every PATH is valid, 1 when any is refused or cannot be
read, 2 on a usage error.

Flags:
`

// runValidate is "baton validate".
func runValidate(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("validate", flag.ContinueOnError)
	fl.SetOutput(stderr)
	asJSON := fl.Bool("json", false, "print one JSON array instead of lines")
	profiles := fl.String("profiles", "", "comma-separated profiles the server offers: parallel-1, check-1; empty for the core alone (default parallel-1, plus check-1 with --evaluator)")
	evaluator := fl.Bool("evaluator", false, "an evaluator is configured, so check-1 can be offered")
	toolsFile := fl.String("tools", "", "tool registration file (YAML): offers baton-tools-1 with its tools")
	var rf registryFlags
	rf.registerWhere(fl)
	fl.Usage = func() {
		fmt.Fprint(stderr, validateUsage)
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	profilesSet, registry := false, false
	fl.Visit(func(f *flag.Flag) {
		profilesSet = profilesSet || f.Name == "profiles"
		registry = registry || f.Name == "data" || f.Name == "database-url"
	})
	offer, err := validateOffer(*profiles, profilesSet, *evaluator)
	if err != nil {
		fmt.Fprintf(stderr, "baton validate: %v\n", err)
		return 2
	}
	if *toolsFile != "" {
		f, err := toolreg.ReadFile(*toolsFile)
		if err != nil {
			fmt.Fprintln(stdout, err)
			return 1
		}
		offer.Profiles = append(offer.Profiles, interpreter.ProfileTools)
		offer.ToolCatalog = f.Catalog()
	}
	if fl.NArg() == 0 {
		fmt.Fprintln(stderr, "baton validate: name at least one PROCESS.md file or process folder")
		fl.Usage()
		return 2
	}

	offer.MaxDepth = rf.depth
	var results []validateResult
	if registry {
		ctx := context.Background()
		reg, closeStore, err := rf.openWith(ctx, stderr, *offer)
		if err != nil {
			fmt.Fprintf(stderr, "baton validate: %v\n", err)
			return 1
		}
		defer closeStore()
		results = validateAgainstRegistry(ctx, reg, rf.org, fl.Args())
	} else {
		results = validateFolders(fl.Args(), offer)
	}
	status := 0
	for _, r := range results {
		if len(r.Issues) > 0 {
			status = 1
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(results); err != nil {
			fmt.Fprintf(stderr, "baton validate: %v\n", err)
			return 1
		}
		return status
	}
	for _, r := range results {
		if len(r.Issues) == 0 {
			fmt.Fprintf(stdout, "%s: ok %s sha256:%s\n", r.Path, r.Name, r.Hash)
			for _, c := range r.Children {
				fmt.Fprintf(stdout, "    %s\n", c)
			}
			continue
		}
		printIssues(stdout, r)
	}
	return status
}

// validateOffer builds the offer from --profiles and --evaluator. An empty
// --profiles= offers the core alone.
func validateOffer(profiles string, set, evaluator bool) (*interpreter.Offer, error) {
	offer := interpreter.DefaultOffer()
	if !set {
		if evaluator {
			offer.Profiles = append(offer.Profiles, interpreter.ProfileCheck)
		}
		return &offer, nil
	}
	offer.Profiles = nil
	for _, p := range strings.Split(profiles, ",") {
		p = strings.TrimSpace(p)
		switch p {
		case "":
			continue
		case interpreter.ProfileParallel, interpreter.ProfileSubprocess:
		case interpreter.ProfileCheck:
			if !evaluator {
				return nil, errors.New("--profiles check-1 needs --evaluator: check-1 is offered only with an evaluator")
			}
		default:
			return nil, fmt.Errorf("--profiles: unknown profile %q (known: parallel-1, check-1, baton-subprocess-1)", p)
		}
		offer.Profiles = append(offer.Profiles, p)
	}
	return &offer, nil
}

// validateResult is one PATH's outcome, and its --json form.
type validateResult struct {
	Path     string              `json:"path"`
	Name     string              `json:"name"`
	Hash     string              `json:"hash"`
	Issues   []interpreter.Issue `json:"issues"`
	Children []validateChild     `json:"children"`
}

// validateChild is one process step's binding and what it was checked
// against.
type validateChild struct {
	interpreter.ChildBinding
	From string `json:"from"`
}

// String is the binding's line under its process.
func (c validateChild) String() string {
	if c.Version == 0 {
		return fmt.Sprintf("%s runs %s, %s", c.Step, c.Process, c.From)
	}
	return fmt.Sprintf("%s runs %s v%d, %s", c.Step, c.Process, c.Version, strings.Replace(c.From, "registry ", "published in ", 1))
}

// printIssues prints one line per issue: PATH:LINE:COL: message.
func printIssues(w io.Writer, r validateResult) {
	for _, is := range r.Issues {
		switch {
		case is.Line > 0 && is.Column > 0:
			fmt.Fprintf(w, "%s:%d:%d: %s\n", r.Path, is.Line, is.Column, is.Message)
		case is.Line > 0:
			fmt.Fprintf(w, "%s:%d: %s\n", r.Path, is.Line, is.Message)
		default:
			fmt.Fprintf(w, "%s: %s\n", r.Path, is.Message)
		}
	}
}

// readPath reads one PATH: its source and the folder name its process
// must carry, or the result that refuses it.
func readPath(path string) ([]byte, string, *validateResult) {
	file, folder, err := processFile(path)
	if err != nil {
		return nil, "", &validateResult{Path: path, Issues: []interpreter.Issue{{Message: err.Error()}}, Children: []validateChild{}}
	}
	src, err := os.ReadFile(file)
	if err != nil {
		return nil, "", &validateResult{Path: path, Issues: []interpreter.Issue{{Message: "cannot read: " + describeIOError(err)}}, Children: []validateChild{}}
	}
	return src, folder, nil
}

// result turns a parse's outcome into PATH's result.
func result(path string, p *interpreter.Process, bound interpreter.Bindings, from func(interpreter.ChildBinding) string, err error) validateResult {
	r := validateResult{Path: path, Issues: []interpreter.Issue{}, Children: []validateChild{}}
	var pe *interpreter.ProcessError
	switch {
	case errors.As(err, &pe):
		r.Issues = append(r.Issues, pe.Issues...)
	case err != nil:
		r.Issues = append(r.Issues, interpreter.Issue{Message: err.Error()})
	default:
		r.Name, r.Hash = p.Name, p.Hash
		for _, b := range bound {
			r.Children = append(r.Children, validateChild{ChildBinding: b, From: from(b)})
		}
	}
	return r
}

// loadProcess reads and parses one PATH on its own: the process, or nil
// and the issues that refuse it. Process steps are checked as far as the
// file goes.
func loadProcess(path string, offer *interpreter.Offer) (*interpreter.Process, validateResult) {
	src, folder, refused := readPath(path)
	if refused != nil {
		return nil, *refused
	}
	p, err := interpreter.Parse(src, &interpreter.ParseOptions{Folder: folder, Offer: offer})
	r := result(path, p, nil, nil, err)
	if err != nil {
		return nil, r
	}
	return p, r
}

// validateFolders checks the PATHs against each other: a process step's
// child must be among them. Children are checked first, so each parent is
// checked against what they bind in turn.
func validateFolders(paths []string, offer *interpreter.Offer) []validateResult {
	results := make([]validateResult, len(paths))
	srcs := make([][]byte, len(paths))
	folders := make([]string, len(paths))
	var deps []interpreter.Dependency
	var readable []int
	for k, path := range paths {
		src, folder, refused := readPath(path)
		if refused != nil {
			results[k] = *refused
			continue
		}
		srcs[k], folders[k] = src, folder
		d, _ := interpreter.ReadDependency(src)
		deps = append(deps, d)
		readable = append(readable, k)
	}
	cat := interpreter.NewCatalog("among the folders given (give its folder too, or check against a registry with --data)")
	withCat := *offer
	withCat.Processes = cat
	dirOf := map[string]string{}
	order, _ := interpreter.PublishOrder(deps)
	for _, i := range order {
		k := readable[i]
		p, bound, err := interpreter.ParseAndBind(srcs[k], &interpreter.ParseOptions{Folder: folders[k], Offer: &withCat})
		results[k] = result(paths[k], p, bound, func(b interpreter.ChildBinding) string { return "folder " + dirOf[b.Process] }, err)
		if err == nil && !cat.Has(p.Name) {
			cat.Add(interpreter.CatalogEntry{Process: p, Children: bound}, true)
			dirOf[p.Name] = pathFolder(paths[k])
		}
	}
	return results
}

// pathFolder names the folder a PATH stands for.
func pathFolder(path string) string {
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		return path
	}
	return filepath.Dir(path)
}

// validateAgainstRegistry checks the PATHs against the processes
// published in the registry's organization.
func validateAgainstRegistry(ctx context.Context, reg *gateway.Registry, org string, paths []string) []validateResult {
	results := make([]validateResult, len(paths))
	from := func(interpreter.ChildBinding) string { return "registry " + org }
	for k, path := range paths {
		src, folder, refused := readPath(path)
		if refused != nil {
			results[k] = *refused
			continue
		}
		p, bound, err := reg.Check(ctx, src, folder)
		results[k] = result(path, p, bound, from, err)
	}
	return results
}

// processFile resolves PATH to the file to read and the folder name the
// process must carry ("" for none).
func processFile(path string) (file, folder string, err error) {
	info, err := os.Stat(path)
	if err != nil {
		return "", "", fmt.Errorf("cannot read: %s", describeIOError(err))
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", "", fmt.Errorf("cannot read: %v", err)
	}
	if info.IsDir() {
		file = filepath.Join(path, "PROCESS.md")
		if _, err := os.Stat(file); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return "", "", errors.New("not a process folder: it has no PROCESS.md")
			}
			return "", "", fmt.Errorf("cannot read: %s", describeIOError(err))
		}
		return file, filepath.Base(abs), nil
	}
	if filepath.Base(abs) == "PROCESS.md" {
		return path, filepath.Base(filepath.Dir(abs)), nil
	}
	return path, "", nil
}

// describeIOError says what went wrong reading a file, without the path the
// output line already starts with.
func describeIOError(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "no such file or folder"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
