// Command slowtests reads the JSON events of `go test -json` on its
// standard input and prints what `go test` prints without -json: build
// errors, the output of every failed test, and each package's result line.
// After the run it prints the slowest top-level tests, so that a test that
// became slow shows in every CI log. It exits 1 when a build, a test or a
// package failed, or when the input holds no package result at all.
//
//	go test -json -count=1 ./... | go run ./internal/slowtests
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	n := flag.Int("n", 10, "how many of the slowest tests to print")
	flag.Parse()
	ok, err := report(os.Stdin, os.Stdout, *n)
	if err != nil {
		fmt.Fprintln(os.Stderr, "slowtests:", err)
		os.Exit(1)
	}
	if !ok {
		os.Exit(1)
	}
}

// report copies what go test would print from the events on in to out,
// then the n slowest top-level tests, and reports whether everything
// passed.
func report(in io.Reader, out io.Writer, n int) (bool, error) {
	r := newRun()
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil {
			// Not an event (go test's own failure before any JSON, say):
			// pass it on as it came.
			fmt.Fprintf(out, "%s\n", line)
			r.broken = true
			continue
		}
		r.take(e, out)
	}
	if err := sc.Err(); err != nil {
		return false, err
	}
	r.slowest(out, n)
	return r.passed(), nil
}
