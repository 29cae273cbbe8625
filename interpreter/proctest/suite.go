package proctest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/baton-run/baton/interpreter"
)

// Options configure Run.
type Options struct {
	// Run, when set, picks the cases whose names it matches.
	Run *regexp.Regexp
	// Tools reads a test file's tools: file, the tool registration of
	// the baton-tools-1 profile, into a catalog. Nil: a test file with
	// tools: is invalid.
	Tools func(path string) (*interpreter.ToolCatalog, error)
	// Explore, when above zero, walks that many random scripts of each
	// process after its cases (see Explore), from Seed.
	Explore int
	Seed    int64
}

// Report is what Run found.
type Report struct {
	Files  []*FileReport `json:"files"`
	Passed int           `json:"passed"`
	Failed int           `json:"failed"`
	// Invalid are the test files (or their processes) that could not be
	// run.
	Invalid []*FileError `json:"invalid"`
}

// FileReport is one test file's result.
type FileReport struct {
	Path    string    `json:"path"`
	Process string    `json:"process"`
	Cases   []*Result `json:"cases"`
	// Routes counts the routes of the process; Untested are those no case
	// took (only when every case of the file ran).
	Routes   int            `json:"routes"`
	Untested []Route        `json:"untested"`
	Explore  *ExploreReport `json:"explore,omitempty"`
}

// Status is the exit status of baton test for the report: 2 when a file
// is invalid, 1 when a case failed, 0 otherwise.
func (r *Report) Status() int {
	switch {
	case len(r.Invalid) > 0:
		return 2
	case r.Failed > 0:
		return 1
	}
	return 0
}

// Run runs every case of every test file under paths.
func Run(paths []string, o Options) (*Report, error) {
	files, err := Find(paths)
	if err != nil {
		return nil, err
	}
	rep := &Report{Files: []*FileReport{}, Invalid: []*FileError{}}
	for _, path := range files {
		fr, err := RunFile(path, o)
		if err != nil {
			var fe *FileError
			if !errors.As(err, &fe) {
				fe = &FileError{Path: path, Msg: err.Error()}
			}
			rep.Invalid = append(rep.Invalid, fe)
			continue
		}
		for _, c := range fr.Cases {
			if c.OK {
				rep.Passed++
			} else {
				rep.Failed++
			}
		}
		rep.Files = append(rep.Files, fr)
	}
	return rep, nil
}

// Load reads a test file and the process (and tools) it names.
func Load(path string, o Options) (*File, Env, error) {
	f, err := ReadFile(path)
	if err != nil {
		return nil, Env{}, err
	}
	env := Env{Roles: f.Roles}
	offer := interpreter.DefaultOffer()
	// The script stands in for the evaluator.
	offer.Profiles = append(offer.Profiles, interpreter.ProfileCheck)
	if f.ToolsPath != "" {
		if o.Tools == nil {
			return nil, env, &FileError{Path: path, Msg: "tools: this runner reads no tool registration"}
		}
		cat, err := o.Tools(f.ToolsPath)
		if err != nil {
			return nil, env, &FileError{Path: path, Msg: "tools: " + err.Error()}
		}
		env.Catalog = cat
		offer.Profiles = append(offer.Profiles, interpreter.ProfileTools)
		offer.ToolCatalog = cat
	}
	// The script stands in for the children it does not name.
	offer.Profiles = append(offer.Profiles, interpreter.ProfileSubprocess)
	env.Children = map[string]*interpreter.Process{}
	for name, cp := range f.Processes {
		c, err := parseProcess(cp, &offer, nil)
		if err != nil {
			return nil, env, &FileError{Path: path, Msg: "processes: " + err.Error()}
		}
		if c.Name != name {
			return nil, env, &FileError{Path: path, Msg: fmt.Sprintf("processes: %s is process %s, not %s", cp, c.Name, name)}
		}
		env.Children[name] = c
	}
	p, err := parseProcess(f.ProcessPath, &offer, env.Children)
	if err != nil {
		return nil, env, &FileError{Path: path, Msg: "process " + err.Error()}
	}
	env.Process = p
	// A role without a binding is the group of its own name, as at start.
	env.Roles = map[string]string{}
	for _, role := range p.Roles() {
		env.Roles[role] = role
	}
	for role, g := range f.Roles {
		env.Roles[role] = g
	}
	return f, env, nil
}

// parseProcess reads and parses the process at path: a PROCESS.md, or a
// folder holding one. When children names every child its process steps
// run, they are checked against them as at publication.
func parseProcess(path string, offer *interpreter.Offer, children map[string]*interpreter.Process) (*interpreter.Process, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = filepath.Join(path, "PROCESS.md")
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	po := &interpreter.ParseOptions{Offer: offer}
	if filepath.Base(path) == "PROCESS.md" {
		po.Folder = filepath.Base(filepath.Dir(path))
	}
	if cat := catalogOf(src, children); cat != nil {
		o := *offer
		o.Processes = cat
		po.Offer = &o
	}
	p, _, err := interpreter.ParseAndBind(src, po)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// catalogOf is a catalog of children for the process in src when children
// holds every process it runs, at each version it names; nil otherwise.
func catalogOf(src []byte, children map[string]*interpreter.Process) *interpreter.Catalog {
	d, ok := interpreter.ReadDependency(src)
	if !ok || len(d.Children()) == 0 {
		return nil
	}
	cat := interpreter.NewCatalog("named in the test file")
	for _, ref := range d.Refs {
		c := children[ref.Name]
		if c == nil {
			return nil
		}
		// The file's child stands for every version a step names.
		cat.Add(interpreter.CatalogEntry{Process: c, Version: max(ref.Version, 1), Children: interpreter.BindLocal(c, children)}, ref.Version == 0)
	}
	return cat
}

// RunFile runs the cases of one test file.
func RunFile(path string, o Options) (*FileReport, error) {
	f, env, err := Load(path, o)
	if err != nil {
		return nil, err
	}
	fr := &FileReport{Path: path, Process: f.ProcessPath, Cases: []*Result{}, Routes: len(Routes(env.Process))}
	taken := map[Route]bool{}
	all := true
	for _, c := range f.Cases {
		if o.Run != nil && !o.Run.MatchString(c.Name) {
			all = false
			continue
		}
		res := RunCase(env, path, c, NewMachine())
		for rt := range res.taken {
			taken[rt] = true
		}
		fr.Cases = append(fr.Cases, res)
	}
	if all {
		fr.Untested = Untested(env.Process, taken)
	}
	if o.Explore > 0 {
		var inputs map[string]any
		if len(f.Cases) > 0 {
			inputs = f.Cases[0].Inputs
		}
		fr.Explore = Explore(env, inputs, o.Explore, o.Seed)
	}
	return fr, nil
}
