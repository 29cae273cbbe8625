package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// Flags win over environment variables, which win over defaults. Every flag
// registered by the helpers below, --name, also reads BATON_NAME (dashes
// become underscores) when it is not given on the command line. A variable
// whose value does not parse stops the command with a message naming it:
// falling back to the default would run with a setting nobody chose.

// defaultData is the data folder of 'baton dev' (PostgreSQL, keys,
// Temporal's SQLite file), where the other commands look for them unless
// told otherwise.
const defaultData = ".baton"

func envName(flagName string) string {
	return "BATON_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// envNote ends the usage of every flag that reads its variable; parseArgs
// recognises those flags by it.
func envNote(flagName string) string { return " (env " + envName(flagName) + ")" }

func stringFlag(fl *flag.FlagSet, p *string, name, def, usage string) {
	fl.StringVar(p, name, def, usage+envNote(name))
}

func intFlag(fl *flag.FlagSet, p *int, name string, def int, usage string) {
	fl.IntVar(p, name, def, usage+envNote(name))
}

func int64Flag(fl *flag.FlagSet, p *int64, name string, def int64, usage string) {
	fl.Int64Var(p, name, def, usage+envNote(name))
}

func durationFlag(fl *flag.FlagSet, p *time.Duration, name string, def time.Duration, usage string) {
	fl.DurationVar(p, name, def, usage+envNote(name))
}

func boolFlag(fl *flag.FlagSet, p *bool, name string, def bool, usage string) {
	fl.BoolVar(p, name, def, usage+envNote(name))
}

// parseCommand parses a command's arguments and environment. When the
// command must stop, ok is false and code is its exit status: 0 after -h,
// 2 after a bad flag (the flag package printed it) or a bad variable
// (printed here).
func parseCommand(name string, fl *flag.FlagSet, args []string, stderr io.Writer) (code int, ok bool) {
	err := parseArgs(fl, args)
	var env envError
	switch {
	case err == nil:
		return 0, true
	case errors.Is(err, flag.ErrHelp):
		return 0, false
	case errors.As(err, &env):
		fmt.Fprintf(stderr, "baton %s: %v\n", name, err)
	}
	return 2, false
}

// envError is a BATON_* variable whose value does not parse.
type envError struct{ error }

// parseArgs parses the command line, then sets each flag that reads the
// environment and was not given there from its variable. Variables that do
// not parse are one envError naming each.
func parseArgs(fl *flag.FlagSet, args []string) error {
	if err := fl.Parse(args); err != nil {
		return err
	}
	given := map[string]bool{}
	fl.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var errs []error
	fl.VisitAll(func(f *flag.Flag) {
		env := envName(f.Name)
		v, ok := os.LookupEnv(env)
		if !ok || given[f.Name] || !strings.HasSuffix(f.Usage, envNote(f.Name)) {
			return
		}
		if err := f.Value.Set(v); err != nil {
			errs = append(errs, fmt.Errorf("%s=%q is not %s (for --%s): fix it or unset it", env, v, expected(f), f.Name))
		}
	})
	if len(errs) > 0 {
		return envError{errors.Join(errs...)}
	}
	return nil
}

// expected says what a flag's value must look like.
func expected(f *flag.Flag) string {
	g, _ := f.Value.(flag.Getter)
	if g == nil {
		return "a valid value"
	}
	switch g.Get().(type) {
	case bool:
		return "true or false"
	case int, int64:
		return "a whole number"
	case time.Duration:
		return "a duration such as 90s, 10m or 1h30m"
	}
	return "a valid value"
}

// listFlag collects a repeatable flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// roleFlag collects --role name=group bindings.
type roleFlag map[string]string

func (r roleFlag) String() string {
	var parts []string
	for k, v := range r {
		parts = append(parts, k+"="+v)
	}
	return strings.Join(parts, ",")
}

func (r roleFlag) Set(v string) error {
	name, group, ok := strings.Cut(v, "=")
	if !ok || name == "" || group == "" {
		return fmt.Errorf("want ROLE=GROUP, got %q", v)
	}
	r[name] = group
	return nil
}
