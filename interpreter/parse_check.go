package interpreter

import (
	"math"
	"strings"
)

// This file reads the check profile's check: key (profile-check §2). Whether
// the profile is offered, and which steps may carry the key, is the
// validator's concern.

var questionKeys = []string{"ask", "pass", "fail", "one_of", "unsure", "levels", "confidence"}

// check reads check: one question as a string, or a list of question
// mappings.
func (b *processBuilder) check(v *fmValue, path string) *Check {
	switch v.kind {
	case jsonInvalid:
		return nil
	case jsonString:
		ask, ok := b.text(v, path)
		if !ok {
			return nil
		}
		return &Check{Short: true, Questions: []*Question{{Ask: ask, Kind: QuestionYesNo}}}
	case jsonArray:
	default:
		b.is.at(v, "%s: expected a question or a list of questions, found a %s", path, v.kind)
		return nil
	}
	if len(v.arr) == 0 {
		b.is.at(v, "%s: at least one question", path)
		return nil
	}
	c := &Check{}
	for i, e := range v.arr {
		if q := b.question(e, indexPath(path, i)); q != nil {
			c.Questions = append(c.Questions, q)
		}
	}
	return c
}

// question reads one question and checks its thresholds and names.
func (b *processBuilder) question(v *fmValue, path string) *Question {
	if !b.isObject(v, path) {
		return nil
	}
	b.known(v, path, questionKeys)
	q := &Question{Kind: QuestionYesNo}
	if a := v.get("ask"); a == nil {
		b.is.at(v, "%s.ask: required", path)
	} else {
		q.Ask, _ = b.text(a, path+".ask")
	}
	oneOf, levels := v.member("one_of"), v.member("levels")
	switch {
	case oneOf != nil && levels != nil:
		b.is.add(levels.keyLine, levels.keyCol, "%s.levels: a question has one_of or levels, not both", path)
		q.Kind = QuestionChoice
	case oneOf != nil:
		q.Kind = QuestionChoice
	case levels != nil:
		q.Kind = QuestionRubric
	}
	pass, fail := v.member("pass"), v.member("fail")
	unsure, confidence := v.member("unsure"), v.member("confidence")
	notFor := func(m *fmMember, what string) {
		if m != nil {
			b.is.add(m.keyLine, m.keyCol, "%s.%s: %s", path, m.key, what)
		}
	}

	switch q.Kind {
	case QuestionYesNo:
		if pass != nil {
			q.Pass = b.probability(pass.val, path+".pass")
		}
		if fail != nil {
			q.Fail = b.probability(fail.val, path+".fail")
		}
		if q.Pass != nil && q.Fail != nil && *q.Fail > *q.Pass {
			b.is.at(fail.val, "%s.fail: must not be above pass (%v)", path, *q.Pass)
		}
		notFor(unsure, "allowed only on a choice question (one_of)")
		notFor(confidence, "allowed only on a choice (one_of) or rubric (levels) question")

	case QuestionChoice:
		q.OneOf = b.choices(oneOf.val, path+".one_of")
		names := map[string]bool{}
		for _, c := range q.OneOf {
			names[c.Name] = true
		}
		if pass == nil {
			b.is.at(v, "%s.pass: required on a choice question: the answer names that pass", path)
		} else if oneOf.val.kind == jsonObject {
			q.PassNames = b.answerNames(pass.val, path+".pass", names, nil)
			if pass.val.kind == jsonArray && len(pass.val.arr) == 0 {
				b.is.at(pass.val, "%s.pass: at least one answer name", path)
			}
		}
		if unsure != nil && oneOf.val.kind == jsonObject {
			passing := map[string]bool{}
			for _, n := range q.PassNames {
				passing[n] = true
			}
			q.Unsure = b.answerNames(unsure.val, path+".unsure", names, passing)
		}
		notFor(fail, "allowed only on a yes/no question")
		if confidence != nil {
			q.Confidence = b.probability(confidence.val, path+".confidence")
		}

	case QuestionRubric:
		q.Levels = b.levels(levels.val, path+".levels")
		if pass == nil {
			b.is.at(v, "%s.pass: required on a rubric question: the lowest passing level, from 0", path)
		} else if f, ok := b.number(pass.val, path+".pass"); ok {
			switch {
			case f != math.Trunc(f) || f < 0:
				b.is.at(pass.val, "%s.pass: must be a level number from 0", path)
			case q.Levels != nil && int(f) >= len(q.Levels):
				b.is.at(pass.val, "%s.pass: must be a level from 0 to %d", path, len(q.Levels)-1)
			default:
				q.Pass = &f
			}
		}
		notFor(fail, "allowed only on a yes/no question")
		notFor(unsure, "allowed only on a choice question (one_of)")
		if confidence != nil {
			q.Confidence = b.probability(confidence.val, path+".confidence")
		}
	}
	return q
}

// probability reads a number from 0 to 1.
func (b *processBuilder) probability(v *fmValue, path string) *float64 {
	f, ok := b.number(v, path)
	if !ok {
		return nil
	}
	if f < 0 || f > 1 {
		b.is.at(v, "%s: must be between 0 and 1", path)
		return nil
	}
	return &f
}

// choices reads a choice question's one_of: two or more answer names, each
// with a description.
func (b *processBuilder) choices(v *fmValue, path string) []Choice {
	if !b.isObject(v, path) {
		return nil
	}
	if len(v.members) < 2 {
		b.is.at(v, "%s: at least two answers", path)
	}
	var out []Choice
	for _, m := range v.members {
		if m.key == "" {
			b.is.add(m.keyLine, m.keyCol, "%s: an answer name must not be empty", path)
			continue
		}
		d, _ := b.str(m.val, path+"."+quoteKey(m.key))
		out = append(out, Choice{Name: m.key, Description: d})
	}
	return out
}

// answerNames reads a list of answer names that must be among names and,
// when taken is given, not in it.
func (b *processBuilder) answerNames(v *fmValue, path string, names, taken map[string]bool) []string {
	list, _ := b.strings(v, path)
	seen := map[string]bool{}
	var out []string
	for i, n := range list {
		e := v.arr[i]
		if e.kind != jsonString {
			continue
		}
		p := indexPath(path, i)
		switch {
		case !names[n]:
			b.is.at(e, "%s: %q is not an answer in one_of", p, n)
		case seen[n]:
			b.is.at(e, "%s: %q is listed twice", p, n)
		case taken[n]:
			b.is.at(e, "%s: %q already passes", p, n)
		default:
			out = append(out, n)
		}
		seen[n] = true
	}
	return out
}

// levels reads a rubric's 2 to 10 level descriptions, worst first.
func (b *processBuilder) levels(v *fmValue, path string) []string {
	list, ok := b.strings(v, path)
	if !ok && v.kind != jsonArray {
		return nil
	}
	if len(v.arr) < 2 || len(v.arr) > 10 {
		b.is.at(v, "%s: 2 to 10 levels, found %d", path, len(v.arr))
	}
	for i, s := range list {
		if v.arr[i].kind == jsonString && strings.TrimSpace(s) == "" {
			b.is.at(v.arr[i], "%s[%d]: must not be blank", path, i)
		}
	}
	return list
}
