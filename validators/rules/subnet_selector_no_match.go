package rules

import (
	"fmt"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/analysis/network"
)

var subnetSelectorNoMatch = &validators.Rule{
	ID:            "subnet-selector-no-match",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.Subnets},
	Summary:       "the subnet selector matches no subnet",
	Doc:           "With no subnet to launch into, the EC2NodeClass never becomes ready and no node launches.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		subnets, err := network.SelectedSubnets(c, o)
		if err != nil {
			return nil, err
		}
		if len(subnets) > 0 || len(o.NodeClass.Spec.SubnetSelectorTerms) == 0 {
			return nil, nil
		}
		return []validators.Finding{{
			Field:   "spec.subnetSelectorTerms",
			Line:    o.Fields.Line("spec", "subnetSelectorTerms"),
			Message: fmt.Sprintf("subnetSelectorTerms (%s) match no subnet, so no node can launch", network.DescribeSelector(o.NodeClass.Spec.SubnetSelectorTerms)),
			Fix:     network.ListInVPC(c, "subnets", "describe-subnets", "tag the cluster's private subnets with the selector's tags (e.g. karpenter.sh/discovery: %s), or correct the terms"),
		}}, nil
	},
}
