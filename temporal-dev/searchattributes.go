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

// searchAttributes checks the search attributes to register.
func searchAttributes(want map[string]enums.IndexedValueType) (map[string]enums.IndexedValueType, error) {
	all := make(map[string]enums.IndexedValueType, len(want))
	for _, name := range slices.Sorted(maps.Keys(want)) {
		typ := want[name]
		if name == "" {
			return nil, fmt.Errorf("temporaldev: Options.SearchAttributes: empty name")
		}
		if _, ok := enums.IndexedValueType_name[int32(typ)]; !ok || typ == enums.INDEXED_VALUE_TYPE_UNSPECIFIED {
			return nil, fmt.Errorf("temporaldev: Options.SearchAttributes[%q]: type %d is not a search attribute type (Keyword, Text, Int, Double, Bool, Datetime, KeywordList)", name, typ)
		}
		all[name] = typ
	}
	return all, nil
}

// registerSearchAttributes adds the search attributes to the namespace, then
// checks that each is registered with the wanted type. Adding one that
// already exists is a no-op, so this runs on every start.
func registerSearchAttributes(ctx context.Context, c client.Client, namespace string, want map[string]enums.IndexedValueType) error {
	if len(want) == 0 {
		return nil
	}
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
