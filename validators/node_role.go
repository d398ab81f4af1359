package validators

import (
	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
)

// This file holds the node-role family: whether the role nodes boot with may join the cluster.
// They need cluster facts; their checks arrive with the facts providers.

var nodeRoleNotAuthorized = &Rule{
	ID:            "node-role-not-authorized",
	Kinds:         []string{KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.ClusterAuthenticationMode, facts.AccessEntries, facts.AWSAuth, facts.Roles},
	Summary:       "the node role is covered neither by an EC2_LINUX/EC2_WINDOWS access entry nor by an aws-auth mapping the cluster's mode honours",
	Doc: "Nodes authenticate with their instance profile's role. EKS lets them join only if the cluster's " +
		"authentication mode honours a mapping for that role: an access entry of type EC2_LINUX or " +
		"EC2_WINDOWS (modes API and API_AND_CONFIG_MAP), or an aws-auth mapRoles entry with the path-less " +
		"role ARN and both system:bootstrappers and system:nodes (modes CONFIG_MAP and API_AND_CONFIG_MAP). " +
		"Otherwise instances launch and never become nodes. The fix is the exact create-access-entry " +
		"command or mapRoles entry.",
}

var nodeRoleAccessEntryType = &Rule{
	ID:            "node-role-access-entry-type",
	Kinds:         []string{KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.AccessEntries, facts.Roles},
	Summary:       "the node role's access entry is not of type EC2_LINUX/EC2_WINDOWS",
	Doc: "A STANDARD access entry cannot carry system: groups, so it never lets nodes join " +
		"(karpenter-provider-aws issue 7558); type EC2 is for EKS Auto Mode. Delete the entry and create it " +
		"again with type EC2_LINUX (or EC2_WINDOWS for Windows families).",
}

var nodeRoleAccessEntryStale = &Rule{
	ID:            "node-role-access-entry-stale",
	Kinds:         []string{KindEC2NodeClass},
	DefaultAction: config.ActionWarn,
	Needs:         []facts.Fact{facts.AccessEntries, facts.Roles},
	Summary:       "the access entry is older than the role (role re-created; the entry points at a dead role id)",
	Doc: "Access entries are bound to the role's unique id. When a role is deleted and created again under " +
		"the same name, the old entry still shows the ARN but authorizes nothing. Re-create the entry.",
}

var awsAuthRoleARNHasPath = &Rule{
	ID:            "aws-auth-rolearn-has-path",
	Kinds:         []string{KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.AWSAuth, facts.Roles},
	Summary:       "the only aws-auth mapping of the node role uses the ARN with the role's path",
	Doc: "EKS turns the node's STS identity into a role ARN without the IAM path, so a mapRoles entry " +
		"written with the path (arn:aws:iam::…:role/team/NodeRole) never matches. Write the path-less ARN.",
}

var al2023HybridAuth = &Rule{
	ID:            "al2023-hybrid-auth",
	Kinds:         []string{KindEC2NodeClass},
	DefaultAction: config.ActionWarn,
	Needs:         []facts.Fact{facts.ClusterAuthenticationMode, facts.AccessEntries, facts.AWSAuth},
	Summary:       "AL2023 nodes whose role is covered only by an access entry",
	Doc: "A field report describes AL2023 nodes that never registered with access entries alone and joined " +
		"after the cluster moved to API_AND_CONFIG_MAP with an aws-auth mapping holding both node groups. " +
		"Karpenter's docs say an EC2_LINUX entry suffices, so this is a warning: if AL2023 nodes do not " +
		"register, add the mapping.",
}

var nodeRoleNotFound = &Rule{
	ID:            "node-role-not-found",
	Kinds:         []string{KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.Roles, facts.InstanceProfiles},
	Summary:       "`spec.role` names no IAM role",
	Doc: "Karpenter creates an instance profile for spec.role; a role that does not exist makes every launch " +
		"fail (karpenter-provider-aws issue 8538). A common slip is an instance profile name in spec.role: " +
		"the message says so and points to spec.instanceProfile.",
}
