package workflows

import (
	"reflect"
	"testing"
)

// A write update's payload is its command's fields with Digest, Org and
// RequestID beside them: no command may have a field of those names, or it
// would overwrite the request's own.
func TestNoCommandFieldShadowsTheWriteHeader(t *testing.T) {
	for _, w := range writes {
		typ := reflect.TypeOf(w.command()).Elem()
		for _, name := range []string{"Digest", "Org", "RequestID"} {
			if _, ok := typ.FieldByName(name); ok {
				t.Errorf("update %s: command %s has a field %s, which the write's header uses", w.name, typ.Name(), name)
			}
		}
	}
}
