package validators

import (
	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
)

// This file holds the subnet and security-group rules; they need EC2 facts.

var subnetSelectorNoMatch = &Rule{
	ID:            "subnet-selector-no-match",
	Kinds:         []string{KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.Subnets},
	Summary:       "the subnet selector matches no subnet",
	Doc:           "With no subnet to launch into, the EC2NodeClass never becomes ready and no node launches.",
}

var securityGroupSelectorNoMatch = &Rule{
	ID:            "security-group-selector-no-match",
	Kinds:         []string{KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.SecurityGroups},
	Summary:       "the security-group selector matches no group",
	Doc:           "With no security group, the EC2NodeClass never becomes ready and no node launches.",
}

var selectorVPCMismatch = &Rule{
	ID:            "selector-vpc-mismatch",
	Kinds:         []string{KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.Subnets, facts.SecurityGroups, facts.ClusterVPCID},
	Summary:       "a selected subnet or group is outside the cluster's VPC",
	Doc: "Instances in another VPC cannot reach the cluster endpoint, and security groups of another VPC " +
		"cannot be attached at all: launches fail or nodes never join.",
}

var subnetPublic = &Rule{
	ID:            "subnet-public",
	Kinds:         []string{KindEC2NodeClass},
	DefaultAction: config.ActionWarn,
	Needs:         []facts.Fact{facts.Subnets},
	Summary:       "a selected subnet is public and `associatePublicIPAddress` is not set",
	Doc: "A public subnet (a route to an internet gateway) tagged for discovery is a classic cause of " +
		"\"instance up, node never registers\": nodes without a public IP there reach neither the internet " +
		"nor a private endpoint. Select private subnets, or set associatePublicIPAddress deliberately.",
}
