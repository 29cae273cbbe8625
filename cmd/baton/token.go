package main

import (
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/interpreter"
)

const tokenUsage = `usage: baton token [--data DIR] [--org ORG] (--agent ID | --person EMAIL [--group G]... | --operator ID) [--ttl D]

Prints a dev bearer token, valid for the gateway of 'baton dev' run with the
same data folder. Only the token goes to stdout. Without --org the token
names no organization and belongs to the gateway's default one (--org of
baton dev); with it, to organization ORG.

Flags:
`

func runToken(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("token", flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.Usage = func() { fmt.Fprint(stderr, tokenUsage); fl.PrintDefaults() }
	var data, agent, person, operator, org string
	var groups listFlag
	var ttl time.Duration
	stringFlag(fl, &data, "data", defaultData, "data folder of 'baton dev'")
	fl.StringVar(&agent, "agent", "", "agent id")
	fl.StringVar(&person, "person", "", "person email")
	fl.StringVar(&operator, "operator", "", "operator id")
	fl.Var(&groups, "group", "group of the person or operator; repeatable")
	fl.StringVar(&org, "org", "", "organization the token belongs to (default: the gateway's default organization)")
	durationFlag(fl, &ttl, "ttl", 24*time.Hour, "how long the token is valid")
	if code, ok := parseCommand("token", fl, args, stderr); !ok {
		return code
	}
	var id auth.Identity
	n := 0
	if agent != "" {
		id, n = auth.Identity{ID: agent, Kind: auth.KindAgent}, n+1
	}
	if person != "" {
		id, n = auth.Identity{ID: person, Kind: auth.KindPerson, Groups: groups}, n+1
	}
	if operator != "" {
		id, n = auth.Identity{ID: operator, Kind: auth.KindOperator, Groups: append([]string{interpreter.DefaultOperators}, groups...)}, n+1
	}
	if n != 1 || fl.NArg() > 0 {
		fmt.Fprintln(stderr, "baton token: give exactly one of --agent, --person, --operator")
		return 2
	}
	id.Org = org
	issuer, err := auth.LoadOrCreateDevKey(data)
	if err != nil {
		fmt.Fprintf(stderr, "baton token: %v\n", err)
		return 1
	}
	tok, err := issuer.Issue(id, ttl)
	if err != nil {
		fmt.Fprintf(stderr, "baton token: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, tok)
	return 0
}
