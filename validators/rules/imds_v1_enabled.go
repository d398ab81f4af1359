package rules

import (
	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

var imdsV1Enabled = &validators.Rule{
	ID:            "imds-v1-enabled",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionWarn,
	Summary:       "`metadataOptions.httpTokens: optional` (IMDSv1 allowed)",
	Doc: "With httpTokens optional, the instance metadata service answers IMDSv1 requests without a " +
		"session token, so any pod that can reach 169.254.169.254 (or an SSRF in one) can read the node " +
		"role's credentials. Karpenter's default is required; set it back unless a workload still needs IMDSv1.",
	Check: func(_ *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		m := o.NodeClass.Spec.MetadataOptions
		if m == nil || m.HTTPTokens != "optional" {
			return nil, nil
		}
		return []validators.Finding{{
			Field:   "spec.metadataOptions.httpTokens",
			Line:    o.Fields.Line("spec", "metadataOptions", "httpTokens"),
			Message: "httpTokens is optional, so IMDSv1 hands the node role's credentials to any pod that can reach the metadata service",
			Fix:     "httpTokens: required",
		}}, nil
	},
}
