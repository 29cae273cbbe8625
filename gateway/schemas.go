package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	santhosh "github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/baton-run/baton/interpreter"
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

// Each tool's argument schema, named in its entry of the tool table
// (tools.go).
const (
	argsDescribe      = `{"type":"object","properties":{},"additionalProperties":false}`
	argsListProcesses = `{"type":"object","properties":{"cursor":{"type":"string"}},"additionalProperties":false}`
	argsStartRun      = `{"type":"object","properties":{"process":{"type":"string"},"version":{"type":"integer","exclusiveMinimum":0,"maximum":9007199254740991},"inputs":` + object + `,"mode":{"type":"string","enum":["live","test"]},` + reqID +
		`},"required":["process","inputs","requestId"],"additionalProperties":false}`
	argsGetRun  = `{"type":"object","properties":{"runId":{"type":"string"}},"required":["runId"],"additionalProperties":false}`
	argsGetWork = `{"type":"object","properties":{` + limit + `,"cursor":{"type":"string"},"process":{"type":"string"}},"additionalProperties":false}`
	argsClaim   = `{"type":"object","properties":{"runId":{"type":"string"},"stepId":{"type":"string"},` + reqID + `},"required":["runId","stepId","requestId"],"additionalProperties":false}`
	argsRenew   = `{"type":"object","properties":{"token":{"type":"string"},"progress":{"type":"string","maxLength":4000},` + reqID + `},"required":["token","requestId"],"additionalProperties":false}`
	argsUpload  = `{"type":"object","properties":{"fileName":{"type":"string","minLength":1,"maxLength":255},"contentType":{"type":"string","minLength":1,"maxLength":160},"contentBase64":{"type":"string","minLength":1},` + reqID +
		`},"required":["fileName","contentType","contentBase64","requestId"],"additionalProperties":false}`
	argsSubmit = `{"type":"object","properties":{"token":{"type":"string"},"output":` + object + `,"evidence":` + evidence + `,"summary":{"type":"string","maxLength":2000},"next":{"type":"string"},"reason":{"type":"string","maxLength":4000},` + reqID +
		`},"required":["token","output","summary","requestId"],"additionalProperties":false}`
	argsEscalate = `{"type":"object","properties":{"token":{"type":"string"},"note":{"type":"string","maxLength":4000},` + reqID + `},"required":["token","note","requestId"],"additionalProperties":false}`
	argsDecide   = `{"type":"object","properties":{"runId":{"type":"string"},"workItemId":{"type":"string"},"snapshot":{"type":"string"},"decision":{"type":"string","enum":["completed","approved","rejected","returned","failed"]},"output":` + object + `,"evidence":` + evidence +
		`,"summary":{"type":"string","maxLength":2000},"next":{"type":"string"},"reason":{"type":"string","maxLength":4000},"note":{"type":"string","maxLength":4000},` + reqID +
		`},"required":["runId","workItemId","snapshot","decision","requestId"],"additionalProperties":false}`
	argsCancel    = `{"type":"object","properties":{"runId":{"type":"string"},"reason":{"type":"string","maxLength":4000},` + reqID + `},"required":["runId","reason","requestId"],"additionalProperties":false}`
	argsSendEvent = `{"type":"object","properties":{"runId":{"type":"string"},"name":{"type":"string"},"data":` + object + `,` + reqID + `},"required":["runId","name","requestId"],"additionalProperties":false}`
	// call_tool is Baton's own (docs/profile-tools.md §6): no official
	// schema, the same notation.
	argsCallTool = `{"type":"object","properties":{"token":{"type":"string"},"tool":{"type":"string","minLength":1,"maxLength":200},"arguments":` + object + `,` + reqID +
		`},"required":["token","tool","requestId"],"additionalProperties":false}`
	// list_runs takes parent too (baton-subprocess-1): the profile's
	// schema, docs/schemas/baton-subprocess-1/list_runs.arguments.json.
	argsListRuns = `{"type":"object","properties":{"process":{"type":"string"},"state":{"type":"string","enum":["active","waiting","ended","cancelled"]},"inputs":` + object + `,"parent":{"type":"string"},` + limit +
		`,"cursor":{"type":"string"}},"additionalProperties":false}`
)

// toolSchema is a tool's argument schema: as published in tools/list, and
// compiled for checking calls; and its output schema (outputschemas.go).
type toolSchema struct {
	schema  *jsonschema.Schema
	checker *santhosh.Schema
	output  json.RawMessage
}

func loadSchemas() (map[interpreter.Tool]toolSchema, error) {
	out := map[interpreter.Tool]toolSchema{}
	c := santhosh.NewCompiler()
	c.DefaultDraft(santhosh.Draft2020)
	c.UseLoader(santhosh.SchemeURLLoader{}) // nothing but what is added here
	for name, text := range argumentSchemas {
		var s jsonschema.Schema
		if err := json.Unmarshal([]byte(text), &s); err != nil {
			return nil, fmt.Errorf("argument schema of %s: %w", name, err)
		}
		doc, err := santhosh.UnmarshalJSON(strings.NewReader(text))
		if err != nil {
			return nil, fmt.Errorf("argument schema of %s: %w", name, err)
		}
		url := "baton:tools/" + string(name) + ".arguments.json"
		if err := c.AddResource(url, doc); err != nil {
			return nil, fmt.Errorf("argument schema of %s: %w", name, err)
		}
		checker, err := c.Compile(url)
		if err != nil {
			return nil, fmt.Errorf("argument schema of %s: %w", name, err)
		}
		output, err := outputSchema(name)
		if err != nil {
			return nil, err
		}
		out[name] = toolSchema{schema: &s, checker: checker, output: output}
	}
	return out, nil
}

var printer = message.NewPrinter(language.English)

// issues checks arguments (decoded with exact numbers) against the schema
// and returns every issue as `<path>: <problem>`: "x: required", "x: not an
// argument of this tool", "limit: maximum: got 500, want 100".
func (t toolSchema) issues(args any) []string {
	return schemaIssues(t.checker.Validate(args), "")
}

// inputSchemaIssues checks a call_tool's arguments against the tool's
// listed input schema (docs/profile-tools.md §6.1 step 4), as the tools'
// own arguments are checked, and returns the issues below "arguments":
// "arguments.currency: required", "arguments.amount: expected number". A
// schema that is absent or that Baton cannot use (one with remote
// references) checks nothing: the server checks what it gets.
func inputSchemaIssues(schema, arguments json.RawMessage) []string {
	if len(schema) == 0 || string(schema) == "null" {
		return nil
	}
	doc, err := santhosh.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil
	}
	c := santhosh.NewCompiler()
	c.DefaultDraft(santhosh.Draft2020)
	c.UseLoader(santhosh.SchemeURLLoader{}) // no remote references
	const url = "baton:tools/input.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil
	}
	checker, err := c.Compile(url)
	if err != nil {
		return nil
	}
	var instance any = map[string]any{}
	if len(arguments) > 0 {
		if instance, err = interpreter.DecodeJSON(arguments); err != nil {
			return []string{"arguments: " + err.Error()}
		}
	}
	return schemaIssues(checker.Validate(instance), "arguments")
}

// schemaIssues turns a validation error into issues, each
// `<root>.<path>: <problem>`; an unknown property of the instance itself
// is "not an argument of this tool".
func schemaIssues(err error, root string) []string {
	if err == nil {
		return nil
	}
	var ve *santhosh.ValidationError
	if !errors.As(err, &ve) {
		return []string{"arguments: " + err.Error()}
	}
	// Missing arguments first, in the schema's order, then unknown ones,
	// then the rest: the same call always lists the same issues the same
	// way.
	var missing, unknown, other []string
	var walk func(e *santhosh.ValidationError)
	walk = func(e *santhosh.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		top := len(e.InstanceLocation) == 0
		at := strings.Join(e.InstanceLocation, ".")
		if root != "" {
			at = strings.Join(append([]string{root}, e.InstanceLocation...), ".")
		}
		prefix := func(name string) string {
			if at == "" {
				return name
			}
			return at + "." + name
		}
		switch k := e.ErrorKind.(type) {
		case *kind.Required:
			for _, m := range k.Missing {
				missing = append(missing, prefix(m)+": required")
			}
		case *kind.AdditionalProperties:
			for _, p := range k.Properties {
				if top {
					unknown = append(unknown, prefix(p)+": not an argument of this tool")
				} else {
					unknown = append(unknown, prefix(p)+": not allowed")
				}
			}
		case *kind.Type:
			if at == "" {
				at = "arguments"
			}
			other = append(other, at+": expected "+strings.Join(k.Want, " or "))
		default:
			if at == "" {
				at = "arguments"
			}
			other = append(other, at+": "+k.LocalizedString(printer))
		}
	}
	walk(ve)
	slices.Sort(unknown)
	slices.Sort(other)
	return slices.Compact(append(append(missing, unknown...), other...))
}
