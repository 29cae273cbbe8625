package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// event is one line of `go test -json` (cmd/test2json), with the build
// events go test adds.
type event struct {
	Action     string
	Package    string
	Test       string
	Elapsed    float64
	Output     string
	ImportPath string
}

// timed is a finished top-level test and how long it took.
type timed struct {
	pkg, test string
	took      time.Duration
}

// run is what the events said so far.
type run struct {
	// output holds each running test's output until it ends, keyed by
	// package and test; a package's own output is under its test "".
	output   map[[2]string]*strings.Builder
	tests    []timed
	packages int
	broken   bool // a build, test or package failed
}

func newRun() *run {
	return &run{output: map[[2]string]*strings.Builder{}}
}

// take handles one event: output is kept until its test ends and printed
// when the test fails; a package prints its result line, and everything it
// printed outside its tests when it fails.
func (r *run) take(e event, out io.Writer) {
	key := [2]string{e.Package, e.Test}
	switch e.Action {
	case "build-output":
		fmt.Fprint(out, e.Output)
	case "build-fail":
		r.broken = true
	case "output":
		b := r.output[key]
		if b == nil {
			b = &strings.Builder{}
			r.output[key] = b
		}
		b.WriteString(e.Output)
	case "pass", "fail", "skip":
		text := ""
		if b := r.output[key]; b != nil {
			text = b.String()
		}
		delete(r.output, key)
		if e.Test == "" {
			r.packageEnded(e, text, out)
			return
		}
		if e.Action == "fail" {
			fmt.Fprint(out, text)
		}
		if !strings.Contains(e.Test, "/") && e.Action != "skip" {
			r.tests = append(r.tests, timed{e.Package, e.Test, time.Duration(e.Elapsed * float64(time.Second))})
		}
	}
}

// packageEnded prints a package's result: its "ok" or "?" line when it
// passed or has no tests, and all it printed outside its tests (the panic
// of a timeout, its FAIL line) when it failed.
func (r *run) packageEnded(e event, text string, out io.Writer) {
	r.packages++
	if e.Action == "fail" {
		r.broken = true
		// Tests still running when the package died (a timeout, a panic)
		// never ended: their output tells what they were doing.
		var running []string
		for k := range r.output {
			if k[0] == e.Package {
				running = append(running, k[1])
			}
		}
		sort.Strings(running)
		for _, test := range running {
			fmt.Fprint(out, r.output[[2]string{e.Package, test}].String())
			delete(r.output, [2]string{e.Package, test})
		}
		if text == "" {
			text = fmt.Sprintf("FAIL\t%s\n", e.Package)
		}
		fmt.Fprint(out, text)
		return
	}
	for _, line := range strings.SplitAfter(text, "\n") {
		if strings.HasPrefix(line, "ok ") || strings.HasPrefix(line, "? ") {
			fmt.Fprint(out, line)
		}
	}
}

// slowest prints the n slowest top-level tests, slowest first.
func (r *run) slowest(out io.Writer, n int) {
	if n <= 0 || len(r.tests) == 0 {
		return
	}
	sort.SliceStable(r.tests, func(i, j int) bool { return r.tests[i].took > r.tests[j].took })
	fmt.Fprintf(out, "== the %d slowest tests\n", min(n, len(r.tests)))
	for _, t := range r.tests[:min(n, len(r.tests))] {
		fmt.Fprintf(out, "%8.1fs  %s %s\n", t.took.Seconds(), t.pkg, t.test)
	}
}

// passed reports whether the run passed: at least one package ended, and
// nothing failed.
func (r *run) passed() bool {
	return !r.broken && r.packages > 0
}
