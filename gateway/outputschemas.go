package gateway

import (
	"encoding/json"
	"fmt"

	"github.com/baton-run/baton/interpreter"
)

// The tools' output schemas, published in tools/list. A tool's structured
// content is the whole envelope, so its schema is too: { ok: true, data }
// with data as the official result schema says (../shared/schemas/core-2/
// tools/*.result.json; call_tool's in docs/schemas/baton-tools-1) with the
// additions of baton-subprocess-1 (docs/schemas/baton-subprocess-1), or
// { ok: false, error } with the official error shape. Clients check
// structured content against it even on refusals, so a test holds every
// result schema equal to the official one, keyword for keyword, but for the
// profile's additions, which it holds equal to the profile's, and checks
// real answers of every tool against the envelope.
//
// The schemas are written here in the notation of the argument schemas
// (schemas.go), from the official shared parts; the root holds the $defs
// that the parts refer to. No $schema: the MCP default dialect, JSON Schema
// 2020-12, is the official schemas' own.
var results, resultDefs, toolErrorSchema = resultSchemaTexts()

// resultTexts are the schemas of the tools' data on ok: true, each named
// in its tool's entry of the tool table (tools.go).
type resultTexts struct {
	describe, listProcesses, runView, getWork, claim, renew, upload, sendEvent, listRuns, callTool string
}

// resultSchemaTexts returns the schema of each tool's data on ok: true, the
// $defs they refer to, and the error's schema. The parts are local names.
func resultSchemaTexts() (resultTexts, string, string) {
	const (
		str         = `{"type":"string"}`
		strOrNull   = `{"type":["string","null"]}`
		number      = `{"type":"number"}`
		mode        = `{"type":"string","enum":["live","test"]}`
		runState    = `{"type":"string","enum":["active","waiting","ended","cancelled"]}`
		fieldType   = `{"type":"string","enum":["string","number","boolean","date","datetime","list","object","person"]}`
		fieldSchema = `{"type":"object","properties":{"type":` + fieldType + `,"description":` + str +
			`,"optional":{"type":"boolean"},"one_of":{"minItems":1,"type":"array","items":{"type":["string","number","boolean"]}},"items":{"anyOf":[` + fieldType +
			`,{"$ref":"#/$defs/__schema0"}]}},"required":["type"],"additionalProperties":false}`
		fields = `{"type":"object","propertyNames":{"type":"string","minLength":1},"additionalProperties":{"anyOf":[` + fieldType + `,{"$ref":"#/$defs/__schema0"}]}}`

		checkVerdict = `{"type":"object","properties":{"verdict":{"type":"string","enum":["pass","fail","unsure","error"]},"advisory":{"type":"boolean"},"model":` + str +
			`,"questions":{"type":"array","items":{"type":"object","properties":{"ask":` + str + `,"kind":{"type":"string","enum":["yes_no","choice","rubric"]},"answer":{"type":["number","string","null"]},"confidence":` + number +
			`,"result":{"type":"string","enum":["pass","fail","unsure"]}},"required":["ask","kind","answer","result"],"additionalProperties":false}},"truncated":{"type":"boolean"},"at":` + str +
			`},"required":["verdict","advisory","model","questions","at"],"additionalProperties":false}`
		evidenceItem = `{"type":"object","properties":{"kind":{"type":"string","enum":["file","link"]},"ref":{"type":"string","minLength":1},"sha256":` + str + `,"url":` + str +
			`},"required":["kind","ref"],"additionalProperties":false}`
		// recordFields are what a step's completion or decision records in
		// run data.
		recordFields = `"output":` + object + `,"evidence":{"type":"array","items":` + evidenceItem + `},"summary":` + str + `,"next":` + str + `,"reason":` + str +
			`,"decision":{"type":"string","enum":["approved","rejected","failed"]},"note":` + str + `,"check":` + checkVerdict + `,"by":` + str + `,"at":` + str
		record  = `{"type":"object","properties":{` + recordFields + `},"additionalProperties":false}`
		runData = `{"type":"object","properties":{"inputs":` + object + `,"steps":{"type":"object","propertyNames":{"type":"string"},"additionalProperties":{"type":"object","properties":{` +
			recordFields + `,"history":{"type":"array","items":` + record + `}},"required":["history"],"additionalProperties":false}}},"required":["inputs","steps"],"additionalProperties":false}`
		handoff = `{"anyOf":[{"type":"object","properties":{"progress":` + str + `,"returned":{"type":"object","properties":{"note":` + str + `,"by":` + str + `,"at":` + str +
			`},"required":["note","by","at"],"additionalProperties":false},"issues":{"type":"array","items":` + str + `},"check":` + checkVerdict +
			`},"additionalProperties":false},{"type":"null"}]}`
		// contract is a step's output, evidence and next, as a claim and a work
		// item show them.
		contract = `"output":{"anyOf":[` + fields + `,{"type":"null"}]},"evidence":{"anyOf":[{"type":"array","items":{"type":"string","enum":["file","link"]}},{"type":"null"}]},` +
			`"next":{"anyOf":[{"type":"array","items":{"type":"object","properties":{"to":` + str + `,"when":{"type":"string","minLength":1}},"required":["to"],"additionalProperties":false}},{"type":"null"}]}`
		workItem = `{"type":"object","properties":{"id":` + str + `,"stepId":` + str + `,"kind":{"type":"string","enum":["agent","task","approve"]},"text":` + str + `,` + contract +
			`,"assignedTo":{"anyOf":[{"type":"object","properties":{"group":` + str + `},"required":["group"],"additionalProperties":false},{"type":"object","properties":{"person":` + str +
			`},"required":["person"],"additionalProperties":false}]},"snapshot":` + str + `,"due":` + strOrNull +
			`,"escalation":{"anyOf":[{"type":"object","properties":{"note":` + str + `,"by":` + str + `,"at":` + str + `,"check":` + checkVerdict + `,"candidate":` + record +
			`},"required":["note","by","at"],"additionalProperties":false},{"type":"null"}]},"handoff":` + handoff + `,"mode":{"type":"string","const":"test"}` +
			`,"decide":{"type":"object","properties":{"tool":{"type":"string","const":"decide"},"arguments":{"type":"object","properties":{"runId":` + str + `,"workItemId":` + str +
			`,"snapshot":` + str + `,"requestId":` + str + `},"required":["runId","workItemId","snapshot","requestId"],"additionalProperties":false},` +
			`"decisions":{"type":"array","items":{"type":"string","enum":["completed","approved","rejected","returned","failed"]}}},"required":["tool","arguments","decisions"],"additionalProperties":false}},` +
			`"required":["id","stepId","kind","text","output","evidence","next","assignedTo","snapshot","due","escalation","handoff","decide"],"additionalProperties":false}`
		stepState = `{"anyOf":[{"type":"string","enum":["ready","claimed","waiting","done","failed","cancelled"]},{"type":"null"}]}`
		// processStep is a process step's entry in a run view's steps
		// (baton-subprocess-1, docs/schemas/baton-subprocess-1/process-step.json);
		// processes is a list_processes item's child bindings
		// (list_processes-processes.json). They are the profile's only
		// additions to core-2's results.
		processStep = `{"type":"object","properties":{"id":` + str + `,"kind":{"type":"string","const":"process"},"state":` + stepState +
			`,"children":{"type":"object","properties":{"total":{"type":"integer","minimum":0},"running":{"type":"integer","minimum":0},"ended":{"type":"integer","minimum":0},` +
			`"runningIds":{"type":"array","items":` + str + `}},"required":["total","running","ended","runningIds"],"additionalProperties":false}},"required":["id","kind","state"],"additionalProperties":false}`
		processes = `{"type":"array","minItems":1,"items":{"type":"object","properties":{"step":` + str + `,"process":{"type":"string","maxLength":64,"pattern":"^[a-z0-9]+(-[a-z0-9]+)*$"},` +
			`"version":{"type":"integer","minimum":1}},"required":["step","process","version"],"additionalProperties":false}}`
		runView = `{"type":"object","properties":{"run":{"type":"object","properties":{"id":` + str + `,"process":` + str + `,"version":` + number + `,"mode":` + mode + `,"state":` + runState +
			`,"outcome":` + strOrNull + `,"ended":{"anyOf":[{"type":"object","properties":{"by":` + str + `,"at":` + str + `,"note":` + strOrNull +
			`},"required":["by","at","note"],"additionalProperties":false},{"type":"null"}]},"startedBy":` + str + `,"startedAt":` + str + `,"updatedAt":` + str +
			`},"required":["id","process","version","mode","state","outcome","ended","startedBy","startedAt","updatedAt"],"additionalProperties":false},"data":` + runData +
			`,"steps":{"type":"array","items":{"anyOf":[{"type":"object","properties":{"id":` + str + `,"kind":{"type":"string","enum":["agent","task","approve","wait","wait_until","wait_for","finish","parallel"]},` +
			`"state":` + stepState + `,"due":` + str + `,"overdue":{"type":"boolean"}},"required":["id","kind","state"],"additionalProperties":false},` + processStep + `]}}` +
			`,"workItems":{"type":"array","items":` + workItem + `},"body":` + str +
			`,"layout":{"type":"object","propertyNames":{"type":"string"},"additionalProperties":{"type":"object","properties":{"x":` + number + `,"y":` + number + `},"required":["x","y"],"additionalProperties":false}}` +
			`,"replayed":{"type":"boolean","const":true}},"required":["run","data","steps","workItems","body"],"additionalProperties":false}`
		page = `,"nextCursor":` + strOrNull + `},"required":["items","nextCursor"],"additionalProperties":false}`

		callToolResult = `{"description":"An MCP CallToolResult as the downstream server sent it, or one Baton wrote.","type":"object","properties":{"content":{"type":"array","items":{"type":"object","properties":{"type":` + str +
			`},"required":["type"]}},"structuredContent":{"type":"object"},"isError":{"type":"boolean"}},"required":["content"]}`
		defsText = `{"__schema0":` + fieldSchema + `,"callToolResult":` + callToolResult + `}`

		toolErrorText = `{"type":"object","properties":{"code":{"type":"string","enum":["invalid","not_accepted","stale","conflict","forbidden","not_found","retry"]},"message":` + str +
			`,"issues":{"type":"array","items":` + str + `}},"required":["code","message"],"additionalProperties":false}`
	)
	return resultTexts{
		runView: runView,
		describe: `{"type":"object","properties":{"protocol":{"type":"string","const":"agentprocess"},"version":` + str + `,"profiles":{"type":"array","items":` + str + `},"leaseSeconds":` + number +
			`,"person":{"type":"object","properties":{"format":` + str + `},"required":["format"],"additionalProperties":false},"tools":{"type":"array","items":` + str + `},"maxUploadBytes":` + number +
			`,"limits":{"type":"object","properties":{"runDataBytes":` + number + `,"checkPass":` + number + `,"checkFail":{"type":["number","null"]},"checkConfidence":` + number + `,"checkStateBytes":` + number +
			`},"required":["runDataBytes","checkPass","checkFail","checkConfidence","checkStateBytes"],"additionalProperties":false}},"required":["protocol","version","profiles","leaseSeconds","person","tools","limits"],"additionalProperties":false}`,
		listProcesses: `{"type":"object","properties":{"items":{"type":"array","items":{"type":"object","properties":{"name":` + str + `,"description":` + str + `,"version":` + number + `,"inputs":` + fields +
			`,"requires":{"type":"object","properties":{"systems":{"minItems":1,"type":"array","items":{"type":"string","maxLength":64,"pattern":"^[a-z0-9]+(-[a-z0-9]+)*$"}}},"required":["systems"],"additionalProperties":false}` +
			`,"processes":` + processes + `},"required":["name","description","version","inputs"],"additionalProperties":false}}` + page,
		getWork: `{"type":"object","properties":{"items":{"type":"array","items":{"anyOf":[{"type":"object","properties":{"runId":` + str + `,"stepId":` + str + `,"process":` + str + `,"version":` + number +
			`,"mode":` + mode + `,"readySince":` + str + `,"due":` + strOrNull + `,"overdue":{"type":"boolean"},"handoff":` + handoff +
			`,"claim":{"type":"object","properties":{"tool":{"type":"string","const":"claim"},"arguments":{"type":"object","properties":{"runId":` + str + `,"stepId":` + str + `,"requestId":` + str +
			`},"required":["runId","stepId","requestId"],"additionalProperties":false}},"required":["tool","arguments"],"additionalProperties":false}},` +
			`"required":["runId","stepId","process","version","mode","readySince","due","overdue","handoff","claim"],"additionalProperties":false},` +
			`{"type":"object","properties":{"runId":` + str + `,"process":` + str + `,"version":` + number + `,"mode":` + mode + `,"workItem":` + workItem +
			`},"required":["runId","process","version","mode","workItem"],"additionalProperties":false}]}}` + page,
		claim: `{"type":"object","properties":{"token":` + str + `,"expiresAt":` + str + `,"extensions":` + object + `,"mode":` + mode +
			`,"step":{"type":"object","properties":{"id":` + str + `,"instructions":` + str + `,` + contract + `},"required":["id","instructions","output","evidence","next"],"additionalProperties":false}` +
			`,"handoff":` + handoff + `,"body":` + str + `,"data":` + runData + `},"required":["token","expiresAt","mode","step","handoff","body","data"],"additionalProperties":false}`,
		renew:     `{"type":"object","properties":{"token":` + str + `,"expiresAt":` + str + `},"required":["token","expiresAt"],"additionalProperties":false}`,
		upload:    `{"type":"object","properties":{"id":` + str + `,"sha256":` + str + `,"bytes":` + number + `},"required":["id","sha256","bytes"],"additionalProperties":false}`,
		sendEvent: `{"type":"object","properties":{"consumedBy":` + strOrNull + `},"required":["consumedBy"],"additionalProperties":false}`,
		listRuns: `{"type":"object","properties":{"items":{"type":"array","items":{"type":"object","properties":{"id":` + str + `,"process":` + str + `,"version":` + number + `,"state":` + runState +
			`,"outcome":` + strOrNull + `,"startedAt":` + str + `,"updatedAt":` + str + `,"inputs":` + object +
			`},"required":["id","process","version","state","outcome","startedAt","updatedAt","inputs"],"additionalProperties":false}}` + page,
		callTool: `{"type":"object","properties":{"status":{"type":"string","enum":["completed","failed","awaiting_approval","rejected","outcome_unknown"]},"tool":` + str +
			`,"digest":{"type":"string","pattern":"^[0-9a-f]{64}$"},"reused":{"type":"boolean"},"result":{"anyOf":[{"$ref":"#/$defs/callToolResult"},{"type":"null"}]},"workItemId":` + strOrNull +
			`,"message":` + str + `},"required":["status","tool","digest","reused","result","workItemId","message"],"additionalProperties":false}`,
	}, defsText, toolErrorText
}

// outputSchema is a tool's whole envelope: each branch names its own keys,
// so no keyword beyond JSON Schema draft 7 is needed to keep others out.
func outputSchema(tool interpreter.Tool) (json.RawMessage, error) {
	data, ok := resultSchemas[tool]
	if !ok {
		return nil, fmt.Errorf("no result schema for tool %s", tool)
	}
	s := `{"type":"object","anyOf":[` +
		`{"properties":{"ok":{"const":true},"data":` + data + `},"required":["ok","data"],"additionalProperties":false},` +
		`{"properties":{"ok":{"const":false},"error":` + toolErrorSchema + `},"required":["ok","error"],"additionalProperties":false}],` +
		`"$defs":` + resultDefs + `}`
	if !json.Valid([]byte(s)) {
		return nil, fmt.Errorf("output schema of %s is not JSON", tool)
	}
	return json.RawMessage(s), nil
}
