package workflows

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
)

func TestDataConverterKeepsHTMLAsItIs(t *testing.T) {
	html := strings.Repeat("<b>&</b>", 8<<10) // 64 KiB
	value := Result{Digest: "d", Value: json.RawMessage(`{"page":"` + html + `"}`)}
	ours, err := DataConverter.ToPayload(value)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(ours.Data, []byte(html)) || len(ours.Data) > len(html)+100 {
		t.Fatalf("payload of %d bytes for %d bytes of HTML", len(ours.Data), len(html))
	}
	def := converter.GetDefaultDataConverter()
	theirs, err := def.ToPayload(value)
	if err != nil {
		t.Fatal(err)
	}
	if len(theirs.Data) < 3*len(html) {
		t.Fatalf("the SDK's default converter wrote %d bytes; this test no longer shows why DataConverter exists", len(theirs.Data))
	}
	// Each reads the other's payloads, to the same value.
	for _, c := range []struct {
		name string
		dc   converter.DataConverter
		p    *commonpb.Payload
	}{{"ours read by the default", def, ours}, {"the default's read by ours", DataConverter, theirs}, {"ours by ours", DataConverter, ours}} {
		var back Result
		if err := c.dc.FromPayload(c.p, &back); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var page struct{ Page string }
		if err := json.Unmarshal(back.Value, &page); err != nil || page.Page != html || back.Digest != "d" {
			t.Fatalf("%s: %v, digest %q, page of %d bytes", c.name, err, back.Digest, len(page.Page))
		}
	}
	// Values that are not JSON keep their own encodings.
	for _, v := range []any{nil, []byte("raw"), &commonpb.Payload{Data: []byte("x")}} {
		p, err := DataConverter.ToPayload(v)
		if err != nil {
			t.Fatal(err)
		}
		if enc := string(p.Metadata[converter.MetadataEncoding]); enc == converter.MetadataEncodingJSON {
			t.Errorf("%T encoded as %s", v, enc)
		}
	}
}
