package rules

import (
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

// ControllerRow is a row of the controller simulation table as the external tests see it: its name
// (L1, D4) and its simulator calls.
type ControllerRow struct {
	ID    string
	Calls []facts.SimulationRow
}

// ControllerRows returns the rows the controller-permission rules ask about the EC2NodeClass o, with
// the facts and input of c, built by the function the rules use; the fixtures answer their questions.
func ControllerRows(c *validators.Context, o *objects.Object) ([]ControllerRow, error) {
	set := buildControllerRows(c, o)
	if set.err != nil {
		return nil, set.err
	}
	out := make([]ControllerRow, len(set.rows))
	for i, r := range set.rows {
		out[i] = ControllerRow{ID: r.ID, Calls: r.calls()}
	}
	return out, nil
}
