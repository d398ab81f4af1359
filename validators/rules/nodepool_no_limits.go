package rules

import (
	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

var nodepoolNoLimits = &validators.Rule{
	ID:            "nodepool-no-limits",
	Kinds:         []string{validators.KindNodePool},
	DefaultAction: config.ActionWarn,
	Summary:       "no `spec.limits`",
	Doc: "Without spec.limits a NodePool scales as far as pending pods ask: a runaway Deployment or a " +
		"scheduling bug becomes an unbounded EC2 bill. Set cpu (and memory) limits a little above the " +
		"pool's expected peak.",
	Check: func(_ *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		if len(o.NodePool.Spec.Limits) > 0 {
			return nil, nil
		}
		return []validators.Finding{{
			Field:   "spec.limits",
			Line:    o.Fields.Line("spec", "limits"),
			Message: "NodePool has no spec.limits, so it can scale without bound",
			Fix:     "add spec.limits, e.g. limits: {cpu: \"1000\", memory: 1000Gi}",
		}}, nil
	},
}
