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
// Decoding is the same either way: clients with and without it read each
// other's payloads, and recorded histories replay unchanged.
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
	data := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
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
