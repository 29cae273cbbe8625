package main

import (
	"strings"
	"testing"
)

func TestReport(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		ok     bool
		want   []string // lines the output holds, in this order
		absent []string // text it must not hold
	}{
		{
			name: "passing packages print their ok line and the slowest tests",
			in: `{"Action":"start","Package":"a"}
{"Action":"run","Package":"a","Test":"TestFast"}
{"Action":"output","Package":"a","Test":"TestFast","Output":"=== RUN   TestFast\n"}
{"Action":"output","Package":"a","Test":"TestFast","Output":"    fast_test.go:9: a log line\n"}
{"Action":"pass","Package":"a","Test":"TestFast","Elapsed":0.5}
{"Action":"output","Package":"a","Test":"TestSlow/sub","Output":"=== RUN   TestSlow/sub\n"}
{"Action":"pass","Package":"a","Test":"TestSlow/sub","Elapsed":70}
{"Action":"pass","Package":"a","Test":"TestSlow","Elapsed":71}
{"Action":"output","Package":"a","Output":"PASS\n"}
{"Action":"output","Package":"a","Output":"ok  \ta\t71.6s\n"}
{"Action":"pass","Package":"a","Elapsed":71.6}
{"Action":"output","Package":"b","Output":"?   \tb\t[no test files]\n"}
{"Action":"skip","Package":"b","Elapsed":0}
{"Action":"pass","Package":"c","Test":"TestMiddle","Elapsed":3}
{"Action":"output","Package":"c","Output":"ok  \tc\t3.1s\n"}
{"Action":"pass","Package":"c","Elapsed":3.1}
`,
			ok:     true,
			want:   []string{"ok  \ta\t71.6s", "?   \tb\t[no test files]", "ok  \tc\t3.1s", "== the 3 slowest tests", "71.0s  a TestSlow", "3.0s  c TestMiddle", "0.5s  a TestFast"},
			absent: []string{"a log line", "=== RUN", "TestSlow/sub", "PASS\n"},
		},
		{
			name: "a failed test prints its output, and the package its FAIL",
			in: `{"Action":"output","Package":"a","Test":"TestOK","Output":"    quiet\n"}
{"Action":"pass","Package":"a","Test":"TestOK","Elapsed":1}
{"Action":"output","Package":"a","Test":"TestBad","Output":"    bad_test.go:3: want 2, got 3\n"}
{"Action":"output","Package":"a","Test":"TestBad","Output":"--- FAIL: TestBad (2.00s)\n"}
{"Action":"fail","Package":"a","Test":"TestBad","Elapsed":2}
{"Action":"output","Package":"a","Output":"FAIL\n"}
{"Action":"output","Package":"a","Output":"FAIL\ta\t3.0s\n"}
{"Action":"fail","Package":"a","Elapsed":3}
`,
			want:   []string{"bad_test.go:3: want 2, got 3", "--- FAIL: TestBad (2.00s)", "FAIL\ta\t3.0s", "2.0s  a TestBad", "1.0s  a TestOK"},
			absent: []string{"quiet"},
		},
		{
			name: "a package that times out prints the tests it was running",
			in: `{"Action":"output","Package":"a","Test":"TestStuck","Output":"=== RUN   TestStuck\n"}
{"Action":"output","Package":"a","Test":"TestStuck","Output":"    stuck_test.go:5: waiting for the run\n"}
{"Action":"output","Package":"a","Output":"panic: test timed out after 15m0s\n"}
{"Action":"output","Package":"a","Output":"FAIL\ta\t900.1s\n"}
{"Action":"fail","Package":"a","Elapsed":900.1}
`,
			want: []string{"waiting for the run", "panic: test timed out after 15m0s", "FAIL\ta\t900.1s"},
		},
		{
			name: "a build failure fails the run",
			in: `{"ImportPath":"a [a.test]","Action":"build-output","Output":"a/x_test.go:3:1: syntax error\n"}
{"ImportPath":"a [a.test]","Action":"build-fail"}
{"Action":"output","Package":"a","Output":"FAIL\ta [build failed]\n"}
{"Action":"fail","Package":"a","Elapsed":0}
`,
			want: []string{"a/x_test.go:3:1: syntax error", "FAIL\ta [build failed]"},
		},
		{
			name: "text that is not an event is passed on and fails the run",
			in:   "go: cannot find main module\n",
			want: []string{"go: cannot find main module"},
		},
		{
			name: "no package at all is a failure",
			in:   "",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			ok, err := report(strings.NewReader(tc.in), &out, 10)
			if err != nil {
				t.Fatal(err)
			}
			if ok != tc.ok {
				t.Errorf("passed = %v, want %v", ok, tc.ok)
			}
			got := out.String()
			at := 0
			for _, w := range tc.want {
				i := strings.Index(got[at:], w)
				if i < 0 {
					t.Fatalf("output lacks %q after position %d:\n%s", w, at, got)
				}
				at += i + len(w)
			}
			for _, a := range tc.absent {
				if strings.Contains(got, a) {
					t.Errorf("output holds %q:\n%s", a, got)
				}
			}
		})
	}
}

// Only the n slowest are printed.
func TestReportPrintsN(t *testing.T) {
	var in strings.Builder
	for i := range 15 {
		in.WriteString(`{"Action":"pass","Package":"a","Test":"Test` + string(rune('A'+i)) + `","Elapsed":` + string(rune('1'+i%9)) + "}\n")
	}
	in.WriteString(`{"Action":"pass","Package":"a","Elapsed":1}` + "\n")
	var out strings.Builder
	if _, err := report(strings.NewReader(in.String()), &out, 10); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(out.String(), "  a Test"); got != 10 {
		t.Fatalf("%d tests printed, want 10:\n%s", got, out.String())
	}
}
