package workflows

import (
	"errors"

	"go.temporal.io/sdk/workflow"
)

type workflowContinueAsNew struct{ input Input }

// asContinueAsNew decodes the input a continue-as-new error carries.
func asContinueAsNew(err error, out **workflowContinueAsNew) bool {
	var can *workflow.ContinueAsNewError
	if !errors.As(err, &can) {
		return false
	}
	var in Input
	if err := DataConverter.FromPayloads(can.Input, &in); err != nil {
		return false
	}
	*out = &workflowContinueAsNew{input: in}
	return true
}
