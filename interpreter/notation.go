package interpreter

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// MarshalJSON writes fields in the spec's field notation, as claim and work
// items show them: an object from field name to a type name (short form) or
// a field object, in declared order.
func (fs Fields) MarshalJSON() ([]byte, error) {
	if fs == nil {
		return []byte("null"), nil
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range fs {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.Name)
		b.Write(k)
		b.WriteByte(':')
		v, err := f.MarshalJSON()
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads the field notation back, keeping declared order.
func (fs *Fields) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		*fs = nil
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("fields: expected an object")
	}
	out := Fields{}
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return err
		}
		name, _ := t.(string)
		var raw json.RawMessage
		if err := d.Decode(&raw); err != nil {
			return err
		}
		f := &Field{}
		if err := f.UnmarshalJSON(raw); err != nil {
			return fmt.Errorf("fields.%s: %w", name, err)
		}
		f.Name = name
		out = append(out, f)
	}
	*fs = out
	return nil
}

type fieldObject struct {
	Type        Type   `json:"type"`
	Description string `json:"description,omitempty"`
	Optional    bool   `json:"optional,omitempty"`
	OneOf       []any  `json:"one_of,omitempty"`
	Items       *Field `json:"items,omitempty"`
}

// MarshalJSON writes one field (without its name) in field notation.
func (f *Field) MarshalJSON() ([]byte, error) {
	if f.Short {
		return json.Marshal(string(f.Type))
	}
	return json.Marshal(fieldObject{Type: f.Type, Description: f.Description, Optional: f.Optional, OneOf: f.OneOf, Items: f.Items})
}

// UnmarshalJSON reads one field in field notation.
func (f *Field) UnmarshalJSON(data []byte) error {
	var short string
	if err := json.Unmarshal(data, &short); err == nil {
		*f = Field{Type: Type(short), Short: true}
		return nil
	}
	var o fieldObject
	if err := DecodeExact(data, &o); err != nil {
		return err
	}
	*f = Field{Type: o.Type, Description: o.Description, Optional: o.Optional, OneOf: o.OneOf, Items: o.Items}
	return nil
}
