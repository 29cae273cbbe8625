package interpreter

import (
	"encoding/json"
	"strings"
)

// SampleDatetime is the datetime every sample uses: in the past, so a
// wait_until on a sample continues at once.
const SampleDatetime = "2020-01-01T09:00:00+02:00"

// Sample returns a value that satisfies f, for walks and examples: the
// first one_of value, or a value of f's type named after the field.
func Sample(f *Field, name string) any {
	if len(f.OneOf) > 0 {
		return f.OneOf[0]
	}
	switch f.Type {
	case TypeString:
		return "some " + name
	case TypeNumber:
		return json.Number("1250.75")
	case TypeBoolean:
		return true
	case TypeDate:
		return "2026-10-07"
	case TypeDatetime:
		return SampleDatetime
	case TypeList:
		if f.Items != nil {
			return []any{Sample(f.Items, name)}
		}
		return []any{"one"}
	case TypeObject:
		return map[string]any{"k": "v"}
	case TypePerson:
		return strings.ToLower(name) + "@example.com"
	}
	return nil
}

// Samples returns a value for every field of fs, optional ones included.
func Samples(fs Fields) Values {
	out := make(Values, len(fs))
	for _, f := range fs {
		out[f.Name] = Sample(f, f.Name)
	}
	return out
}
