package rules

import (
	"fmt"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/analysis/network"
)

var securityGroupSelectorNoMatch = &validators.Rule{
	ID:            "security-group-selector-no-match",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.SecurityGroups},
	Summary:       "the security-group selector matches no group",
	Doc:           "With no security group, the EC2NodeClass never becomes ready and no node launches.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		groups, err := network.SelectedGroups(c, o)
		if err != nil {
			return nil, err
		}
		if len(groups) > 0 || len(o.NodeClass.Spec.SecurityGroupSelectorTerms) == 0 {
			return nil, nil
		}
		return []validators.Finding{{
			Field:   "spec.securityGroupSelectorTerms",
			Line:    o.Fields.Line("spec", "securityGroupSelectorTerms"),
			Message: fmt.Sprintf("securityGroupSelectorTerms (%s) match no security group, so no node can launch", network.DescribeSelector(o.NodeClass.Spec.SecurityGroupSelectorTerms)),
			Fix:     network.ListInVPC(c, "security groups", "describe-security-groups", "tag the node security group with the selector's tags (e.g. karpenter.sh/discovery: %s), or correct the terms"),
		}}, nil
	},
}
