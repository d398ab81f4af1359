package validators

import (
	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
)

// This file holds the instance-profile rules that need IAM facts.

var instanceProfileNotFound = &Rule{
	ID:            "instance-profile-not-found",
	Kinds:         []string{KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.InstanceProfiles},
	Summary:       "no instance profile of that name",
	Doc: "spec.instanceProfile must name an existing instance profile; Karpenter does not create it. " +
		"Launches fail until it exists.",
}

var instanceProfileNoRole = &Rule{
	ID:            "instance-profile-no-role",
	Kinds:         []string{KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.InstanceProfiles},
	Summary:       "the instance profile holds no role",
	Doc: "An instance profile without a role gives the instance no credentials, so the kubelet cannot " +
		"authenticate and the node never joins. Add the node role with aws iam add-role-to-instance-profile.",
}
