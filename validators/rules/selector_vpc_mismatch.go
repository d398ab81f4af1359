package rules

import (
	"fmt"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/analysis/network"
)

var selectorVPCMismatch = &validators.Rule{
	ID:            "selector-vpc-mismatch",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.Subnets, facts.SecurityGroups, facts.ClusterVPCID},
	Summary:       "a selected subnet or group is outside the cluster's VPC",
	Doc: "Instances in another VPC cannot reach the cluster endpoint, and security groups of another VPC " +
		"cannot be attached at all: launches fail or nodes never join.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		cl, err := c.Facts.Cluster(c)
		if err != nil {
			return nil, err
		}
		subnets, err := network.SelectedSubnets(c, o)
		if err != nil {
			return nil, err
		}
		groups, err := network.SelectedGroups(c, o)
		if err != nil {
			return nil, err
		}
		var out []validators.Finding
		var bad []string
		for _, s := range subnets {
			if s.VPCID != cl.VPCID {
				bad = append(bad, fmt.Sprintf("%s (%s)", s.ID, s.VPCID))
			}
		}
		if len(bad) > 0 {
			out = append(out, validators.Finding{Field: "spec.subnetSelectorTerms", Line: o.Fields.Line("spec", "subnetSelectorTerms"),
				Message: fmt.Sprintf("selected subnets are outside cluster %s's VPC %s: %s", cl.Name, cl.VPCID, strings.Join(bad, ", ")),
				Fix:     "narrow the terms to subnets of " + cl.VPCID})
		}
		bad = nil
		for _, g := range groups {
			if g.VPCID != cl.VPCID {
				bad = append(bad, fmt.Sprintf("%s %s (%s)", g.ID, g.Name, g.VPCID))
			}
		}
		if len(bad) > 0 {
			out = append(out, validators.Finding{Field: "spec.securityGroupSelectorTerms", Line: o.Fields.Line("spec", "securityGroupSelectorTerms"),
				Message: fmt.Sprintf("selected security groups are outside cluster %s's VPC %s: %s", cl.Name, cl.VPCID, strings.Join(bad, ", ")),
				Fix:     "narrow the terms to groups of " + cl.VPCID})
		}
		return out, nil
	},
}
