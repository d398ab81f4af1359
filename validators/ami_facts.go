package validators

import (
	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
)

// This file holds the AMI rules that need image or cluster facts.

var amiSelectorNoMatch = &Rule{
	ID:            "ami-selector-no-match",
	Kinds:         []string{KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.Images, facts.SSMParameters, facts.ClusterVersion},
	Summary:       "a term (or the alias for the cluster's version) resolves to no available image",
	Doc: "A selector that matches no available image leaves Karpenter nothing to launch: the EC2NodeClass " +
		"never becomes ready. Aliases are resolved for the cluster's Kubernetes minor version through the " +
		"public SSM parameters.",
}

var amiOwnerNotAllowed = &Rule{
	ID:            "ami-owner-not-allowed",
	Kinds:         []string{KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.Images},
	Enabled:       func(c *config.Config) bool { return len(c.AMIOwners.Allowed) > 0 },
	Summary:       "a resolved image's owner is not in `amiOwners.allowed` (off when the list is empty)",
	Doc: "With amiOwners.allowed configured, every image a selector resolves to must be owned by an " +
		"allowed account id or alias (amazon, or self for the cluster's account), so nodes never boot an " +
		"image from an unexpected publisher.",
}

var amiFamilyMismatch = &Rule{
	ID:            "ami-family-mismatch",
	Kinds:         []string{KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.Images},
	Summary:       "a resolved image belongs to another family than `amiFamily`",
	Doc: "Karpenter generates userData for spec.amiFamily. An AL2 image picked by name or id under " +
		"amiFamily AL2023 (karpenter-provider-aws issue 7660), or a Bottlerocket image under AL2023, boots " +
		"with userData it cannot read and never joins.",
}

var amiFamilyEOL = &Rule{
	ID:            "ami-family-eol",
	Kinds:         []string{KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.ClusterVersion},
	Summary:       "AL2 on Kubernetes 1.33 or later; `windows2025@` below 1.35",
	Doc: "EKS published no AL2 AMIs after Kubernetes 1.32, so AL2 (amiFamily, al2@ alias, or an AL2 image) " +
		"has nothing to run on 1.33 and later; windows2025 needs 1.35. Move to the al2023@latest alias.",
}
