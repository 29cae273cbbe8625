package temporaldev

import (
	"context"
	"fmt"
	"maps"
	"slices"

	enums "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"
)

// BatonSearchAttributes are the custom search attributes every Baton run sets
// on its workflow, so that SREs can find runs in the Temporal UI. Start
// registers them on every server, together with Options.SearchAttributes.
// Callers must not modify the map.
var BatonSearchAttributes = map[string]enums.IndexedValueType{
	"BatonProcess": enums.INDEXED_VALUE_TYPE_KEYWORD,
	"BatonVersion": enums.INDEXED_VALUE_TYPE_INT,
	"BatonState":   enums.INDEXED_VALUE_TYPE_KEYWORD,
	"BatonOutcome": enums.INDEXED_VALUE_TYPE_KEYWORD,
	"BatonMode":    enums.INDEXED_VALUE_TYPE_KEYWORD,
}

// searchAttributes merges Baton's search attributes with extra ones. A name in
// both must have the same type.
func searchAttributes(extra map[string]enums.IndexedValueType) (map[string]enums.IndexedValueType, error) {
	all := maps.Clone(BatonSearchAttributes)
	for _, name := range slices.Sorted(maps.Keys(extra)) {
		typ := extra[name]
		if name == "" {
			return nil, fmt.Errorf("temporaldev: Options.SearchAttributes: empty name")
		}
		if _, ok := enums.IndexedValueType_name[int32(typ)]; !ok || typ == enums.INDEXED_VALUE_TYPE_UNSPECIFIED {
			return nil, fmt.Errorf("temporaldev: Options.SearchAttributes[%q]: type %d is not a search attribute type (Keyword, Text, Int, Double, Bool, Datetime, KeywordList)", name, typ)
		}
		if have, ok := all[name]; ok && have != typ {
			return nil, fmt.Errorf("temporaldev: Options.SearchAttributes[%q] is %s, but Baton registers it as %s", name, typ, have)
		}
		all[name] = typ
	}
	return all, nil
}

// registerSearchAttributes adds the search attributes to the namespace, then
// checks that each is registered with the wanted type. Adding one that
// already exists is a no-op, so this runs on every start.
func registerSearchAttributes(ctx context.Context, c client.Client, namespace string, want map[string]enums.IndexedValueType) error {
	_, err := c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace:        namespace,
		SearchAttributes: want,
	})
	if err != nil {
		return fmt.Errorf("temporaldev: register search attributes in namespace %q: %w", namespace, err)
	}
	resp, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return fmt.Errorf("temporaldev: list search attributes of namespace %q: %w", namespace, err)
	}
	for _, name := range slices.Sorted(maps.Keys(want)) {
		have, ok := resp.GetCustomAttributes()[name]
		if !ok {
			return fmt.Errorf("temporaldev: search attribute %q was not registered in namespace %q", name, namespace)
		}
		if have != want[name] {
			return fmt.Errorf("temporaldev: search attribute %q is registered as %s in namespace %q, not %s; use a new database file or another name", name, have, namespace, want[name])
		}
	}
	return nil
}
