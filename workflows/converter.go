package workflows

import (
	"bytes"
	"encoding/json"
	"fmt"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
)

// DataConverter is the data converter every Temporal client of Baton uses
// (client.Options.DataConverter), the worker's above all: the SDK's
// default, except that JSON is written without HTML escaping.
// encoding/json writes <, > and & as six-byte escapes by default, so run
// data full of them (an HTML page, say) would take up to six times its
// size in every payload that carries it, and limits.runDataBytes, which
// counts them as one byte, would not bound what a run gives Temporal.
// Much of what a run sends is JSON marshalled before it reaches the
// converter (answers, the view, the state, a process's frontmatter), so
// the converter also undoes those escapes in what it writes: the same
// JSON value, shorter. Decoding is the same either way: clients with and
// without it read each other's payloads, and recorded histories replay
// unchanged.
var DataConverter = converter.NewCompositeDataConverter(
	converter.NewNilPayloadConverter(),
	converter.NewByteSlicePayloadConverter(),
	converter.NewProtoJSONPayloadConverter(),
	converter.NewProtoPayloadConverter(),
	jsonPayloadConverter{},
)

// jsonPayloadConverter is converter.JSONPayloadConverter without HTML
// escaping.
type jsonPayloadConverter struct{}

func (jsonPayloadConverter) ToPayload(value any) (*commonpb.Payload, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(value); err != nil {
		return nil, fmt.Errorf("%w: %v", converter.ErrUnableToEncode, err)
	}
	data := unescapeHTML(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	return &commonpb.Payload{
		Metadata: map[string][]byte{converter.MetadataEncoding: []byte(converter.MetadataEncodingJSON)},
		Data:     data,
	}, nil
}

func (jsonPayloadConverter) FromPayload(payload *commonpb.Payload, valuePtr any) error {
	if err := json.Unmarshal(payload.GetData(), valuePtr); err != nil {
		return fmt.Errorf("%w: %v", converter.ErrUnableToDecode, err)
	}
	return nil
}

func (jsonPayloadConverter) ToString(payload *commonpb.Payload) string {
	return string(payload.GetData())
}

func (jsonPayloadConverter) Encoding() string { return converter.MetadataEncodingJSON }

// unescapeHTML replaces the escapes \u003c, \u003e and \u0026 in the JSON
// text b with the characters <, > and & they stand for, leaving every
// other byte and escape as it is: the same JSON value. Outside strings
// valid JSON has no backslash, and inside them escapes are read pairwise,
// so the text \\u003c (a backslash, then "u003c") stays as it is.
func unescapeHTML(b []byte) []byte {
	if !bytes.Contains(b, []byte(`\u00`)) {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\\' || i+1 == len(b) {
			out = append(out, c)
			continue
		}
		if b[i+1] == 'u' && i+5 < len(b) && b[i+2] == '0' && b[i+3] == '0' {
			if r, ok := htmlEscapes[string(bytes.ToLower(b[i+4:i+6]))]; ok {
				out = append(out, r)
				i += 5
				continue
			}
		}
		out = append(out, c, b[i+1])
		i++
	}
	return out
}

// htmlEscapes are the escapes encoding/json writes for HTML safety, by
// their last two hex digits.
var htmlEscapes = map[string]byte{"3c": '<', "3e": '>', "26": '&'}
