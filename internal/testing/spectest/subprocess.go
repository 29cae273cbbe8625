package spectest

import (
	"encoding/json"
	"fmt"
)

// The additions of baton-subprocess-1 to core-2's results
// (docs/profile-subprocess.md §1.4, §3, §6): a run view's process steps,
// their output in run data, and a list_processes item's processes. A
// result that holds them is valid when each addition is valid against the
// profile's schema and the rest against core-2's.

// runViewTools are the tools whose data is a run view.
var runViewTools = map[string]bool{
	"start_run": true, "get_run": true, "submit": true, "escalate": true, "decide": true, "cancel": true,
}

// withoutSubprocessAdditions checks the additions in a tool's data against
// the profile's schemas and returns the data without them.
func withoutSubprocessAdditions(tool string, data json.RawMessage) (json.RawMessage, error) {
	switch {
	case runViewTools[tool]:
		return withoutProcessSteps(data)
	case tool == "list_processes":
		return withoutProcesses(data)
	}
	return data, nil
}

// withoutProcessSteps checks a run view's process steps, and their output
// in run data, and returns the view without the steps.
func withoutProcessSteps(data json.RawMessage) (json.RawMessage, error) {
	var view map[string]json.RawMessage
	if err := json.Unmarshal(data, &view); err != nil {
		return data, nil // core-2's schema says what is wrong
	}
	var steps []json.RawMessage
	if err := json.Unmarshal(view["steps"], &steps); err != nil {
		return data, nil
	}
	var runData struct {
		Steps map[string]struct {
			Output  json.RawMessage   `json:"output"`
			History []json.RawMessage `json:"history"`
		} `json:"steps"`
	}
	_ = json.Unmarshal(view["data"], &runData)
	kept := make([]json.RawMessage, 0, len(steps))
	for _, raw := range steps {
		var s struct {
			ID   string `json:"id"`
			Kind string `json:"kind"`
		}
		if err := json.Unmarshal(raw, &s); err != nil || s.Kind != "process" {
			kept = append(kept, raw)
			continue
		}
		if err := ValidateErr(ProfileSubprocessDir+"/process-step.json", raw); err != nil {
			return nil, fmt.Errorf("process step %s: %w", s.ID, err)
		}
		d, ok := runData.Steps[s.ID]
		if !ok {
			continue
		}
		outputs := []json.RawMessage{d.Output}
		for _, h := range d.History {
			var old struct {
				Output json.RawMessage `json:"output"`
			}
			_ = json.Unmarshal(h, &old)
			outputs = append(outputs, old.Output)
		}
		for _, out := range outputs {
			if len(out) == 0 {
				continue
			}
			if err := ValidateErr(ProfileSubprocessDir+"/process-output.json", out); err != nil {
				return nil, fmt.Errorf("steps.%s.output: %w", s.ID, err)
			}
		}
	}
	b, err := json.Marshal(kept)
	if err != nil {
		return nil, err
	}
	view["steps"] = b
	return json.Marshal(view)
}

// withoutProcesses checks each list_processes item's processes and returns
// the listing without them.
func withoutProcesses(data json.RawMessage) (json.RawMessage, error) {
	var list map[string]json.RawMessage
	if err := json.Unmarshal(data, &list); err != nil {
		return data, nil
	}
	var items []map[string]json.RawMessage
	if err := json.Unmarshal(list["items"], &items); err != nil {
		return data, nil
	}
	for _, it := range items {
		p, ok := it["processes"]
		if !ok {
			continue
		}
		if err := ValidateErr(ProfileSubprocessDir+"/list_processes-processes.json", p); err != nil {
			return nil, fmt.Errorf("processes of %s: %w", it["name"], err)
		}
		delete(it, "processes")
	}
	b, err := json.Marshal(items)
	if err != nil {
		return nil, err
	}
	list["items"] = b
	return json.Marshal(list)
}
