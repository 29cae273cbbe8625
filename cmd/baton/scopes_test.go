package main

import (
	"flag"
	"reflect"
	"testing"
)

// --scopes takes space or comma separated scopes; none by default.
func TestGatewayScopesFlag(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{nil, nil},
		{[]string{"--scopes", "baton:work, baton:decide"}, []string{"baton:work", "baton:decide"}},
		{[]string{"--scopes", "openid baton"}, []string{"openid", "baton"}},
	} {
		var c serveConfig
		fl := flag.NewFlagSet("gateway", flag.ContinueOnError)
		c.flags(fl, true, false)
		if err := fl.Parse(tt.args); err != nil {
			t.Fatal(err)
		}
		if got := c.scopeList(); !reflect.DeepEqual(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
			t.Errorf("%q: scopes %q, want %q", tt.args, got, tt.want)
		}
	}
}
