package gateway

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/interpreter"
)

func TestCheckEvidence(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	f, err := b.store.PutFile(b.ctx, nil, store.File{Org: "o_test", ID: "f_91a", Name: "report.pdf", ContentType: "application/pdf", Bytes: []byte("%PDF"), CreatedBy: "a_screener"})
	if err != nil {
		t.Fatal(err)
	}
	ev := []interpreter.Evidence{
		{Kind: "file", Ref: "f_91a"},
		{Kind: "link", Ref: "https://example.com/doc"},
		{Kind: "file", Ref: "f_000"},
		{Kind: "file", Ref: "f_91a"},
	}
	got, err := b.g.checkEvidence(b.ctx, b.g.opts.Org, ev)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]interpreter.FileCheck{
		"f_91a": {Found: true, Matches: true, SHA256: f.SHA256},
		"f_000": {},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("checkEvidence = %+v, want %+v", got, want)
	}

	if got, err := b.g.checkEvidence(b.ctx, b.g.opts.Org, nil); err != nil || got == nil || len(got) != 0 {
		t.Errorf("no evidence: %+v, %v; want an empty map", got, err)
	}
}

// Past MaxEvidence items a call is invalid, before anything is read; at
// MaxEvidence it is checked, each distinct file once.
func TestCheckEvidenceCap(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	if _, err := b.store.PutFile(b.ctx, nil, store.File{Org: "o_test", ID: "f_1", Bytes: []byte("x"), CreatedBy: "a"}); err != nil {
		t.Fatal(err)
	}
	at := make([]interpreter.Evidence, MaxEvidence)
	for i := range at {
		at[i] = interpreter.Evidence{Kind: "file", Ref: "f_1"}
	}
	got, err := b.g.checkEvidence(b.ctx, b.g.opts.Org, at)
	if err != nil || len(got) != 1 || !got["f_1"].Matches {
		t.Fatalf("%d items: %+v, %v", MaxEvidence, got, err)
	}

	over := append(at, interpreter.Evidence{Kind: "link", Ref: "x"})
	_, err = b.g.checkEvidence(b.ctx, b.g.opts.Org, over)
	var e *interpreter.Error
	if !errors.As(err, &e) || e.Code != interpreter.CodeInvalid || !reflect.DeepEqual(e.Issues, []string{fmt.Sprintf("evidence: over %d items", MaxEvidence)}) {
		t.Fatalf("%d items: err = %v, want invalid with the cap as its issue", len(over), err)
	}
	t.Log(e.Message)
}
