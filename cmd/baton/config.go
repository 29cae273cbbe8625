package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Flags win over environment variables, which win over defaults. Every flag
// --name also reads BATON_NAME (dashes become underscores).

func envName(flagName string) string {
	return "BATON_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

func envString(name, def string) string {
	if v, ok := os.LookupEnv(envName(name)); ok {
		return v
	}
	return def
}

func stringFlag(fl *flag.FlagSet, p *string, name, def, usage string) {
	fl.StringVar(p, name, envString(name, def), usage+" (env "+envName(name)+")")
}

func intFlag(fl *flag.FlagSet, p *int, name string, def int, usage string) {
	v := def
	if s, ok := os.LookupEnv(envName(name)); ok {
		if n, err := strconv.Atoi(s); err == nil {
			v = n
		}
	}
	fl.IntVar(p, name, v, usage+" (env "+envName(name)+")")
}

func durationFlag(fl *flag.FlagSet, p *time.Duration, name string, def time.Duration, usage string) {
	v := def
	if s, ok := os.LookupEnv(envName(name)); ok {
		if d, err := time.ParseDuration(s); err == nil {
			v = d
		}
	}
	fl.DurationVar(p, name, v, usage+" (env "+envName(name)+")")
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
