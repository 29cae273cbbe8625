package interpreter

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// This file reads a process step (profile baton-subprocess-1,
// docs/profile-subprocess.md §1) and checks what the file alone decides:
// the keys' shapes, the paths, item without for_each, for_each on a list,
// on_outcome's keys and targets. What needs the child is checked against
// the published processes in subprocess_bind.go.

// maxSafeInteger is the largest whole number a JSON client reads exactly.
const maxSafeInteger = 1<<53 - 1

// processCall reads a process step's keys beside process:.
func (b *processBuilder) processCall(v *fmValue, name, path string) *ProcessCall {
	c := &ProcessCall{Process: name, Inputs: []CallInput{}}
	if vv := v.get("version"); vv != nil {
		c.Version = b.wholeNumber(vv, path+".version", maxSafeInteger)
	}
	if fv := v.get("for_each"); fv != nil {
		c.ForEach, _ = b.text(fv, path+".for_each")
	}
	if iv := v.get("inputs"); iv != nil && b.isObject(iv, path+".inputs") {
		for _, m := range iv.members {
			p := path + ".inputs." + quoteKey(m.key)
			if m.key == "" {
				b.is.add(m.keyLine, m.keyCol, "%s.inputs: an input name must not be empty", path)
				continue
			}
			in := CallInput{Name: m.key}
			switch {
			case m.val.kind == jsonInvalid:
				continue
			case m.val.kind == jsonNull:
				b.is.at(m.val, "%s: null is not a value; leave an optional input out", p)
				continue
			case m.val.kind == jsonString && IsCallPath(m.val.str):
				in.Path = m.val.str
			default:
				if m.val.kind == jsonString && strings.TrimSpace(m.val.str) == "" {
					b.is.at(m.val, "%s: must not be blank", p)
					continue
				}
				raw, ok := literalJSON(m.val)
				if !ok {
					b.is.at(m.val, "%s: null is not a value, not even inside a list or mapping", p)
					continue
				}
				in.Value = raw
			}
			c.Inputs = append(c.Inputs, in)
		}
	}
	if cv := v.get("concurrency"); cv != nil {
		c.Concurrency = b.wholeNumber(cv, path+".concurrency", DefaultMaxChildren)
	}
	if ov := v.get("on_outcome"); ov != nil && b.isObject(ov, path+".on_outcome") {
		if len(ov.members) == 0 {
			b.is.at(ov, "%s.on_outcome: name at least one outcome, or leave on_outcome out", path)
		}
		for _, m := range ov.members {
			p := path + ".on_outcome." + quoteKey(m.key)
			if strings.TrimSpace(m.key) == "" {
				b.is.add(m.keyLine, m.keyCol, "%s.on_outcome: an outcome must not be blank", path)
				continue
			}
			to, ok := b.str(m.val, p)
			if ok {
				c.OnOutcome = append(c.OnOutcome, OutcomeRoute{Outcome: m.key, To: to})
			}
		}
	}
	return c
}

// wholeNumber reads a whole number from 1 to max; 0 when refused.
func (b *processBuilder) wholeNumber(v *fmValue, path string, max int) int {
	f, ok := b.number(v, path)
	if !ok {
		return 0
	}
	if f != float64(int64(f)) || f < 1 || f > float64(max) {
		b.is.at(v, "%s: must be a whole number from 1 to %d", path, max)
		return 0
	}
	return int(f)
}

// literalJSON writes a literal input as exact JSON: numbers as written,
// members in the order written. false when it holds a null.
func literalJSON(v *fmValue) (json.RawMessage, bool) {
	var buf bytes.Buffer
	ok := writeLiteral(&buf, v)
	return json.RawMessage(buf.Bytes()), ok
}

func writeLiteral(buf *bytes.Buffer, v *fmValue) bool {
	switch v.kind {
	case jsonBool:
		buf.WriteString(strconv.FormatBool(v.b))
	case jsonNumber:
		buf.WriteString(v.str)
	case jsonString:
		s, _ := json.Marshal(v.str)
		buf.Write(s)
	case jsonArray:
		buf.WriteByte('[')
		for i, e := range v.arr {
			if i > 0 {
				buf.WriteByte(',')
			}
			if !writeLiteral(buf, e) {
				return false
			}
		}
		buf.WriteByte(']')
	case jsonObject:
		buf.WriteByte('{')
		for i, m := range v.members {
			if i > 0 {
				buf.WriteByte(',')
			}
			k, _ := json.Marshal(m.key)
			buf.Write(k)
			buf.WriteByte(':')
			if !writeLiteral(buf, m.val) {
				return false
			}
		}
		buf.WriteByte('}')
	default:
		return false
	}
	return true
}

// processStep checks a process step as far as the file goes.
func (v *validator) processStep(i int, s *Step, kindVal *fmValue) {
	sv := v.src[i]
	path := stepPath(i)
	if !v.offer.HasProfile(ProfileSubprocess) {
		v.is.at(kindVal, "%s.process: needs the %s profile, which this server does not offer", path, ProfileSubprocess)
	}
	c := s.Call
	if c == nil {
		return
	}
	if kindVal.kind == jsonString && c.Process != "" && !validName(c.Process) {
		v.is.at(kindVal, "%s.process: %q is not a process name: it must match %s and be at most 64 characters", path, c.Process, namePattern)
	}

	var items *Field // the for_each list's item type, when declared
	fv := sv.get("for_each")
	if fv != nil && fv.kind == jsonString && c.ForEach != "" {
		if f := v.pathField(fv, path+".for_each", c.ForEach); f != nil {
			if f.Type != TypeList {
				v.is.at(fv, "%s.for_each: %s is a %s field; for_each needs a list field", path, c.ForEach, f.Type)
			}
			items = f.Items
		}
	}
	if m := sv.member("concurrency"); m != nil && fv == nil {
		v.is.add(m.keyLine, m.keyCol, "%s.concurrency: allowed only beside for_each; this step runs one child", path)
	}

	if iv := sv.get("inputs"); iv != nil && iv.kind == jsonObject {
		for _, m := range iv.members {
			if m.val.kind != jsonString || !IsCallPath(m.val.str) {
				continue
			}
			v.callPath(m.val, path+".inputs."+quoteKey(m.key), m.val.str, fv != nil, items)
		}
	}

	if ov := sv.get("on_outcome"); ov != nil && ov.kind == jsonObject {
		for _, m := range ov.members {
			p := path + ".on_outcome." + quoteKey(m.key)
			if fv != nil && m.key != "failed" && m.key != "cancelled" && strings.TrimSpace(m.key) != "" {
				v.is.add(m.keyLine, m.keyCol, "%s: with for_each, on_outcome names only failed and cancelled; the children's other outcomes continue at next", p)
			}
			if m.val.kind == jsonString {
				if m.val.str == s.ID {
					v.is.at(m.val, "%s: a process step cannot route to itself; route to a step before it to run it again", p)
					continue
				}
				v.target(m.val, p, m.val.str, false)
			}
		}
	}
}

// callPath checks a path in a process step's inputs: a run-data path naming
// a declared field, or item and item.<field> beside for_each.
func (v *validator) callPath(at *fmValue, key, path string, forEach bool, items *Field) {
	if path != "item" && !strings.HasPrefix(path, "item.") {
		v.pathField(at, key, path)
		return
	}
	switch {
	case !forEach:
		v.is.at(at, "%s: %s needs for_each; this step runs one child, and item is the element of the for_each list", key, path)
	case path == "item.":
		v.is.at(at, "%s: %q is not a path item or item.<field>", key, path)
	case path != "item" && items != nil && items.Type != TypeObject:
		v.is.at(at, "%s: the for_each list's items are %s values; item.<field> needs items of type object", key, items.Type)
	}
}

// pathField resolves a run-data path, inputs.<field> or
// steps.<id>.output.<field>, to its declared field, reporting a path that
// is malformed or names nothing; nil then.
func (v *validator) pathField(at *fmValue, key, path string) *Field {
	var f *Field
	switch {
	case strings.HasPrefix(path, "inputs.") && len(path) > len("inputs."):
		f = v.p.Inputs.Lookup(path[len("inputs."):])
	case strings.HasPrefix(path, "steps."):
		id, field, ok := strings.Cut(path[len("steps."):], ".output.")
		if !ok || id == "" || field == "" || strings.Contains(id, ".") {
			v.is.at(at, "%s: %q is not a path inputs.<field> or steps.<id>.output.<field>", key, path)
			return nil
		}
		j, known := v.ids[id]
		if !known {
			v.is.at(at, "%s: %s names unknown step %q", key, path, id)
			return nil
		}
		f = v.p.Steps[j].Output.Lookup(field)
	default:
		v.is.at(at, "%s: %q is not a path inputs.<field> or steps.<id>.output.<field>", key, path)
		return nil
	}
	if f == nil {
		v.is.at(at, "%s: %s is not a declared field", key, path)
	}
	return f
}
