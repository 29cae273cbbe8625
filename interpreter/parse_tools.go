package interpreter

import "strings"

// This file reads and validates the baton-tools-1 profile's tools: key
// (docs/profile-tools.md §3). The builder checks its shape; the validator
// checks it against the profile offer and the registered tools. Which steps
// may carry it is validate.go's kindKeys.

var toolUseKeys = []string{"ref", "policy", "approvers"}

// tools reads a step's tools: a list of references "server/tool" or
// mappings { ref, policy, approvers }.
func (b *processBuilder) tools(v *fmValue, path string) []ToolUse {
	if !b.isList(v, path) {
		return nil
	}
	if len(v.arr) == 0 {
		b.is.at(v, "%s: at least one tool", path)
		return nil
	}
	out := make([]ToolUse, 0, len(v.arr))
	for i, e := range v.arr {
		p := indexPath(path, i)
		switch e.kind {
		case jsonInvalid:
		case jsonString:
			ref, ok := b.text(e, p)
			if ok {
				out = append(out, ToolUse{Ref: ref, Short: true})
			}
		case jsonObject:
			if u, ok := b.toolUse(e, p); ok {
				out = append(out, u)
			}
		default:
			b.is.at(e, "%s: expected a tool reference server/tool or { ref, policy, approvers }, found a %s", p, e.kind)
		}
	}
	return out
}

// toolUse reads one { ref, policy, approvers } entry.
func (b *processBuilder) toolUse(v *fmValue, path string) (ToolUse, bool) {
	b.known(v, path, toolUseKeys)
	u := ToolUse{}
	ok := true
	if r := v.get("ref"); r == nil {
		b.is.at(v, "%s.ref: required", path)
		ok = false
	} else {
		var good bool
		u.Ref, good = b.text(r, path+".ref")
		ok = ok && good
	}
	if pv := v.get("policy"); pv != nil {
		if s, good := b.str(pv, path+".policy"); good {
			u.Policy = Policy(s)
			if !u.Policy.Valid() {
				b.is.at(pv, "%s.policy: unknown policy %q (read, write or approval_required)", path, s)
				u.Policy = ""
			}
		}
	}
	if av := v.get("approvers"); av != nil {
		roles, _ := b.strings(av, path+".approvers")
		if av.kind == jsonArray && len(av.arr) == 0 {
			b.is.at(av, "%s.approvers: at least one role", path)
		}
		seen := map[string]bool{}
		for i, role := range roles {
			e := av.arr[i]
			if e.kind != jsonString {
				continue
			}
			p := indexPath(path+".approvers", i)
			switch {
			case strings.TrimSpace(role) == "":
				b.is.at(e, "%s: must not be blank", p)
				continue
			case role == "initiator":
				b.is.at(e, "%s: approvers are role names; the person who started the run does not approve its tool calls", p)
				continue
			case IsPath(role):
				b.is.at(e, "%s: approvers are role names, not run-data paths (a role name has no dot)", p)
				continue
			case seen[role]:
				b.is.at(e, "%s: %q is listed twice", p, role)
				continue
			}
			seen[role] = true
			u.Approvers = append(u.Approvers, role)
		}
		if pv := v.get("policy"); pv != nil && u.Policy != "" && u.Policy != PolicyApprovalRequired {
			b.is.at(pv, "%s.policy: %s cannot stand beside approvers; a step that names approvers makes the tool approval_required", path, u.Policy)
		}
	}
	return u, ok
}

// tools checks an agent step's tools against the offer and the registered
// tools: the profile, reference form, duplicates, unknown servers and
// tools, loosening, and approval with nobody to give it.
func (v *validator) tools(i int, s *Step, m *fmMember) {
	path := stepPath(i) + ".tools"
	if !v.offer.HasProfile(ProfileTools) {
		v.is.add(m.keyLine, m.keyCol, "%s: needs the %s profile, which this server does not offer (it needs a tool registration, --tools)", path, ProfileTools)
		return
	}
	if m.val.kind != jsonArray {
		return
	}
	cat := v.offer.ToolCatalog
	seen := map[string]bool{}
	for j, e := range m.val.arr {
		p := indexPath(path, j)
		refVal := e
		if e.kind == jsonObject {
			refVal = e.get("ref")
		}
		if refVal == nil || refVal.kind != jsonString || strings.TrimSpace(refVal.str) == "" {
			continue
		}
		ref := refVal.str
		server, tool, ok := SplitToolRef(ref)
		if !ok {
			v.is.at(refVal, "%s: %q is not a tool reference server/tool", p, ref)
			continue
		}
		if seen[ref] {
			v.is.at(refVal, "%s: %s is listed twice", p, ref)
			continue
		}
		seen[ref] = true
		reg, found := cat.Lookup(ref)
		if !found {
			servers := cat.Servers()
			switch {
			case len(servers) == 0:
				v.is.at(refVal, "%s: unknown tool server %q (no tool servers are registered)", p, server)
			case !contains(servers, server):
				v.is.at(refVal, "%s: unknown tool server %q (registered: %s)", p, server, strings.Join(servers, ", "))
			default:
				v.is.at(refVal, "%s: server %s has no registered tool %q (its tools: %s)", p, server, tool, strings.Join(cat.ServerTools(server), ", "))
			}
			continue
		}
		use := v.toolUseAt(s, ref)
		if use == nil {
			continue
		}
		if pv := e.get("policy"); pv != nil && use.Policy != "" && use.Policy.Looser(reg.Policy) {
			v.is.at(pv, "%s.policy: %s would loosen %s, registered as %s; a step may only tighten a policy (read < write < approval_required)",
				p, use.Policy, ref, reg.Policy)
			continue
		}
		if use.EffectivePolicy(reg.Policy) == PolicyApprovalRequired && len(use.Approvers) == 0 && len(reg.Approvers) == 0 && e.get("approvers") == nil {
			v.is.at(e, "%s: %s needs approval and no one may give it: name approvers here or in the tool registration", p, ref)
		}
	}
}

// toolUseAt returns the step's built entry for ref.
func (v *validator) toolUseAt(s *Step, ref string) *ToolUse {
	for k := range s.Tools {
		if s.Tools[k].Ref == ref {
			return &s.Tools[k]
		}
	}
	return nil
}

// toolRoles returns the approver role names of a step's tools, in the
// order written.
func (s *Step) toolRoles() []string {
	var out []string
	for _, u := range s.Tools {
		out = append(out, u.Approvers...)
	}
	return out
}
