package gateway

import (
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
)

// The tools' argument schemas, as tools.md defines them. They are published
// in tools/list and every call is checked against them before anything else
// (SPEC-DECISIONS §1). A test holds them equal to the official schemas.
const (
	reqID    = `"requestId":{"type":"string","minLength":1,"maxLength":128}`
	object   = `{"type":"object","propertyNames":{"type":"string"},"additionalProperties":{}}`
	evidence = `{"type":"array","items":{"type":"object","properties":{"kind":{"type":"string","enum":["file","link"]},"ref":{"type":"string","minLength":1}},"required":["kind","ref"],"additionalProperties":false}}`
	limit    = `"limit":{"type":"integer","minimum":1,"maximum":100}`
)

var argumentSchemas = map[string]string{
	"describe":       `{"type":"object","properties":{},"additionalProperties":false}`,
	"list_processes": `{"type":"object","properties":{"cursor":{"type":"string"}},"additionalProperties":false}`,
	"start_run": `{"type":"object","properties":{"process":{"type":"string"},"version":{"type":"integer","exclusiveMinimum":0,"maximum":9007199254740991},"inputs":` + object + `,"mode":{"type":"string","enum":["live","test"]},` + reqID +
		`},"required":["process","inputs","requestId"],"additionalProperties":false}`,
	"get_run":  `{"type":"object","properties":{"runId":{"type":"string"}},"required":["runId"],"additionalProperties":false}`,
	"get_work": `{"type":"object","properties":{` + limit + `,"cursor":{"type":"string"},"process":{"type":"string"}},"additionalProperties":false}`,
	"claim":    `{"type":"object","properties":{"runId":{"type":"string"},"stepId":{"type":"string"},` + reqID + `},"required":["runId","stepId","requestId"],"additionalProperties":false}`,
	"renew":    `{"type":"object","properties":{"token":{"type":"string"},"progress":{"type":"string","maxLength":4000},` + reqID + `},"required":["token","requestId"],"additionalProperties":false}`,
	"upload": `{"type":"object","properties":{"fileName":{"type":"string","minLength":1,"maxLength":255},"contentType":{"type":"string","minLength":1,"maxLength":160},"contentBase64":{"type":"string","minLength":1},` + reqID +
		`},"required":["fileName","contentType","contentBase64","requestId"],"additionalProperties":false}`,
	"submit": `{"type":"object","properties":{"token":{"type":"string"},"output":` + object + `,"evidence":` + evidence + `,"summary":{"type":"string","maxLength":2000},"next":{"type":"string"},"reason":{"type":"string","maxLength":4000},` + reqID +
		`},"required":["token","output","summary","requestId"],"additionalProperties":false}`,
	"escalate": `{"type":"object","properties":{"token":{"type":"string"},"note":{"type":"string","maxLength":4000},` + reqID + `},"required":["token","note","requestId"],"additionalProperties":false}`,
	"decide": `{"type":"object","properties":{"runId":{"type":"string"},"workItemId":{"type":"string"},"snapshot":{"type":"string"},"decision":{"type":"string","enum":["completed","approved","rejected","returned","failed"]},"output":` + object + `,"evidence":` + evidence +
		`,"summary":{"type":"string","maxLength":2000},"next":{"type":"string"},"reason":{"type":"string","maxLength":4000},"note":{"type":"string","maxLength":4000},` + reqID +
		`},"required":["runId","workItemId","snapshot","decision","requestId"],"additionalProperties":false}`,
	"cancel":     `{"type":"object","properties":{"runId":{"type":"string"},"reason":{"type":"string","maxLength":4000},` + reqID + `},"required":["runId","reason","requestId"],"additionalProperties":false}`,
	"send_event": `{"type":"object","properties":{"runId":{"type":"string"},"name":{"type":"string"},"data":` + object + `,` + reqID + `},"required":["runId","name","requestId"],"additionalProperties":false}`,
	"list_runs": `{"type":"object","properties":{"process":{"type":"string"},"state":{"type":"string","enum":["active","waiting","ended","cancelled"]},"inputs":` + object + `,` + limit +
		`,"cursor":{"type":"string"}},"additionalProperties":false}`,
}

// toolSchema is a tool's argument schema, parsed and resolved.
type toolSchema struct {
	schema   *jsonschema.Schema
	resolved *jsonschema.Resolved
}

func loadSchemas() (map[string]toolSchema, error) {
	out := map[string]toolSchema{}
	for name, text := range argumentSchemas {
		var s jsonschema.Schema
		if err := json.Unmarshal([]byte(text), &s); err != nil {
			return nil, fmt.Errorf("argument schema of %s: %w", name, err)
		}
		r, err := s.Resolve(nil)
		if err != nil {
			return nil, fmt.Errorf("argument schema of %s: %w", name, err)
		}
		out[name] = toolSchema{schema: &s, resolved: r}
	}
	return out, nil
}
