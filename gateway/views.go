package gateway

import (
	"encoding/json"
	"time"

	"github.com/baton-run/baton/interpreter"
)

// timeNow is the gateway's clock, for checks made before a run exists.
var timeNow = time.Now

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// viewWithURLs adds a short-lived url to every file evidence item of a run
// view from the workflow (spec §5).
func (g *Gateway) viewWithURLs(raw json.RawMessage) (any, error) {
	var v interpreter.View
	if err := decodeExact(raw, &v); err != nil {
		return nil, err
	}
	g.fillURLs(v.Data)
	return &v, nil
}

func (g *Gateway) fillURLs(d *interpreter.Data) {
	if d == nil {
		return
	}
	now := timeNow()
	fill := func(r *interpreter.Record) {
		if r == nil {
			return
		}
		for i := range r.Evidence {
			if r.Evidence[i].Kind == "file" {
				r.Evidence[i].URL = g.files.URL(g.opts.Org, r.Evidence[i].Ref, now)
			}
		}
	}
	for _, sd := range d.Steps {
		fill(sd.Record)
		for _, h := range sd.History {
			fill(h)
		}
	}
}
