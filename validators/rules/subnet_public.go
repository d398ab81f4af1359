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

var subnetPublic = &validators.Rule{
	ID:            "subnet-public",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionWarn,
	Needs:         []facts.Fact{facts.Subnets},
	Summary:       "a selected subnet is public and `associatePublicIPAddress` is not set",
	Doc: "A public subnet (a route to an internet gateway) tagged for discovery is a classic cause of " +
		"\"instance up, node never registers\": nodes without a public IP there reach nothing outside the " +
		"VPC (the cluster's public endpoint, ECR, STS) unless VPC endpoints serve them. Select private " +
		"subnets, or set associatePublicIPAddress deliberately.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		if o.NodeClass.Spec.AssociatePublicIPAddress != nil {
			return nil, nil
		}
		subnets, err := network.SelectedSubnets(c, o)
		if err != nil {
			return nil, err
		}
		var pub []string
		for _, s := range subnets {
			if !s.Public {
				continue
			}
			ip := "instances get no public IP there (mapPublicIpOnLaunch false), so they reach nothing outside the VPC (the cluster's public endpoint, ECR, STS) unless VPC endpoints serve them"
			if s.MapPublicIPOnLaunch {
				ip = "instances get a public IP there (mapPublicIpOnLaunch true)"
			}
			pub = append(pub, fmt.Sprintf("%s routes to an internet gateway and %s", network.SubnetName(s), ip))
		}
		if len(pub) == 0 {
			return nil, nil
		}
		return []validators.Finding{{
			Field:   "spec.subnetSelectorTerms",
			Line:    o.Fields.Line("spec", "subnetSelectorTerms"),
			Message: "the selector picks public subnets: " + strings.Join(pub, "; "),
			Fix:     "remove the discovery tag from the public subnets (or narrow the terms to private ones), or set associatePublicIPAddress deliberately",
		}}, nil
	},
}
