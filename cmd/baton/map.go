package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/baton-run/baton/internal/toolreg"
	"github.com/baton-run/baton/interpreter"
	"github.com/baton-run/baton/interpreter/mermaid"
)

const mapUsage = `usage: baton map [--tools FILE] [--data DIR | --database-url URL] [--org ORG] PATH

Prints the Mermaid flowchart of a process, for reviews and docs: its steps by
kind, next routes with their when, on_reject and on_timeout edges, parallel
branches, sub-processes with their on_outcome routes, and finish outcomes.
Paste it into a mermaid code block.

PATH is a process folder or a PROCESS.md file, as for baton validate. The
process must be valid; every profile Baton implements is accepted. A process
whose agent steps list tools (baton-tools-1) needs the tool registration file.
A process step (baton-subprocess-1) is drawn as a sub-process node naming the
process it runs; with --data or --database-url it is checked against the
registry's organization --org, and the node names the version it binds.

Flags:
`

// runMap is "baton map".
func runMap(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("map", flag.ContinueOnError)
	fl.SetOutput(stderr)
	toolsFile := fl.String("tools", "", "tool registration file (YAML), for a process whose steps list tools")
	var rf registryFlags
	rf.registerWhere(fl)
	fl.Usage = func() { fmt.Fprint(stderr, mapUsage); fl.PrintDefaults() }
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fl.NArg() != 1 {
		fmt.Fprintln(stderr, "baton map: name one PROCESS.md file or process folder")
		fl.Usage()
		return 2
	}
	registry := false
	fl.Visit(func(f *flag.Flag) { registry = registry || f.Name == "data" || f.Name == "database-url" })
	offer := interpreter.DefaultOffer()
	offer.Profiles = append(offer.Profiles, interpreter.ProfileCheck, interpreter.ProfileSubprocess)
	offer.MaxDepth = rf.depth
	if *toolsFile != "" {
		f, err := toolreg.ReadFile(*toolsFile)
		if err != nil {
			fmt.Fprintf(stderr, "baton map: %v\n", err)
			return 1
		}
		offer.Profiles = append(offer.Profiles, interpreter.ProfileTools)
		offer.ToolCatalog = f.Catalog()
	}
	if !registry {
		p, r := loadProcess(fl.Arg(0), &offer)
		if p == nil {
			printIssues(stderr, r)
			return 1
		}
		fmt.Fprint(stdout, mermaid.Flowchart(p, nil))
		return 0
	}
	ctx := context.Background()
	reg, closeStore, err := rf.openWith(ctx, stderr, offer)
	if err != nil {
		fmt.Fprintf(stderr, "baton map: %v\n", err)
		return 1
	}
	defer closeStore()
	src, folder, refused := readPath(fl.Arg(0))
	if refused != nil {
		printIssues(stderr, *refused)
		return 1
	}
	p, bound, err := reg.Check(ctx, src, folder)
	if err != nil {
		printIssues(stderr, result(fl.Arg(0), nil, nil, nil, err))
		return 1
	}
	fmt.Fprint(stdout, mermaid.Flowchart(p, &mermaid.Options{Children: bound}))
	return 0
}
