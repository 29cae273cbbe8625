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
	// JSON marshalled before it reaches the converter (an answer, the view,
	// the state) loses its escapes too.
	pre, err := json.Marshal(map[string]string{"page": html})
	if err != nil {
		t.Fatal(err)
	}
	p, err := DataConverter.ToPayload(Result{Value: pre})
	if err != nil {
		t.Fatal(err)
	}
	if len(pre) < 3*len(html) || len(p.Data) > len(html)+100 {
		t.Fatalf("marshalled %d bytes, payload %d bytes, for %d bytes of HTML", len(pre), len(p.Data), len(html))
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

func TestUnescapeHTML(t *testing.T) {
	tests := []struct{ in, want string }{
		{`"a\u003cb\u003e\u0026"`, `"a<b>&"`},
		{`"\u003C\u003E"`, `"<>"`},
		{`"\\u003c"`, `"\\u003c"`}, // a backslash, then the text u003c
		{`"\\\u003c"`, `"\\<"`},    // a backslash, then an escaped <
		{`"\u2028\u0027\u00e9\n"`, `"\u2028\u0027\u00e9\n"`},
		{`"\u003"`, `"\u003"`},
		{`{"k\u0026":[1,"\u003e"]}`, `{"k&":[1,">"]}`},
		{`plain`, `plain`},
	}
	for _, tt := range tests {
		if got := string(unescapeHTML([]byte(tt.in))); got != tt.want {
			t.Errorf("unescapeHTML(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// FuzzDataConverterRoundTrip: whatever a string holds, a value written by
// DataConverter reads back the same, by DataConverter and by the SDK's
// default converter, also when it was marshalled before.
func FuzzDataConverterRoundTrip(f *testing.F) {
	for _, s := range []string{"", "<b>&amp;</b>", `\u003c`, `\\u003c\`, "\u2028\x00\"\\", "é<\u003e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		pre, err := json.Marshal(s)
		if err != nil {
			t.Skip("not a string JSON can carry")
		}
		in := Result{Digest: s, Value: pre}
		p, err := DataConverter.ToPayload(in)
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(p.Data) {
			t.Fatalf("invalid JSON %q", p.Data)
		}
		var want string
		_ = json.Unmarshal(pre, &want)
		for _, dc := range []converter.DataConverter{DataConverter, converter.GetDefaultDataConverter()} {
			var back Result
			if err := dc.FromPayload(p, &back); err != nil {
				t.Fatal(err)
			}
			var got string
			if err := json.Unmarshal(back.Value, &got); err != nil || got != want || back.Digest != want {
				t.Fatalf("%q came back as %q / %q (%v)", s, back.Digest, got, err)
			}
		}
	})
}
