package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/baton-run/baton/internal/toolreg"
	"github.com/baton-run/baton/interpreter"
)

const validateUsage = `usage: baton validate [--json] [--profiles LIST] [--evaluator] [--tools FILE] PATH...

Checks each PROCESS.md against the specification and prints its content hash.
With --tools, the tool registration file (profile baton-tools-1) is checked
too, and an agent step's tools: key is checked against it.

A PATH is a process folder or a file. For a folder, its PROCESS.md is read and
the process name must equal the folder's name. For a file named PROCESS.md the
same holds for the folder it is in; a file with any other name (a draft) is
checked without a folder name.

Output, one line per PATH when valid and one per issue when not:
  PATH: ok NAME sha256:HEX
  PATH:LINE:COL: message
With --json, one JSON array of {path, name, hash, issues: [{line, column,
message}]}; hash is lowercase hex, name and hash are "" when refused.

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
	profilesSet := false
	fl.Visit(func(f *flag.Flag) { profilesSet = profilesSet || f.Name == "profiles" })
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

	results := make([]validateResult, 0, fl.NArg())
	status := 0
	for _, path := range fl.Args() {
		r := validatePath(path, offer)
		if len(r.Issues) > 0 {
			status = 1
		}
		results = append(results, r)
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
		case interpreter.ProfileParallel:
		case interpreter.ProfileCheck:
			if !evaluator {
				return nil, errors.New("--profiles check-1 needs --evaluator: check-1 is offered only with an evaluator")
			}
		default:
			return nil, fmt.Errorf("--profiles: unknown profile %q (known: parallel-1, check-1)", p)
		}
		offer.Profiles = append(offer.Profiles, p)
	}
	return &offer, nil
}

// validateResult is one PATH's outcome, and its --json form.
type validateResult struct {
	Path   string              `json:"path"`
	Name   string              `json:"name"`
	Hash   string              `json:"hash"`
	Issues []interpreter.Issue `json:"issues"`
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

// validatePath reads and checks one PATH.
func validatePath(path string, offer *interpreter.Offer) validateResult {
	_, r := loadProcess(path, offer)
	return r
}

// loadProcess reads and parses one PATH: the process, or nil and the
// issues that refuse it.
func loadProcess(path string, offer *interpreter.Offer) (*interpreter.Process, validateResult) {
	r := validateResult{Path: path, Issues: []interpreter.Issue{}}
	file, folder, err := processFile(path)
	if err != nil {
		r.Issues = append(r.Issues, interpreter.Issue{Message: err.Error()})
		return nil, r
	}
	src, err := os.ReadFile(file)
	if err != nil {
		r.Issues = append(r.Issues, interpreter.Issue{Message: "cannot read: " + describeIOError(err)})
		return nil, r
	}
	p, err := interpreter.Parse(src, &interpreter.ParseOptions{Folder: folder, Offer: offer})
	var pe *interpreter.ProcessError
	switch {
	case errors.As(err, &pe):
		r.Issues = append(r.Issues, pe.Issues...)
	case err != nil:
		r.Issues = append(r.Issues, interpreter.Issue{Message: err.Error()})
	default:
		r.Name, r.Hash = p.Name, p.Hash
		return p, r
	}
	return nil, r
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
