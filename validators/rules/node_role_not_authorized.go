package rules

import (
	"strings"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

var nodeRoleNotAuthorized = &validators.Rule{
	ID:            "node-role-not-authorized",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.ClusterAuthenticationMode, facts.Roles},
	MayNeed:       []facts.Fact{facts.AccessEntries, facts.AWSAuth, facts.InstanceProfiles},
	Summary:       "the node role is covered neither by a node access entry nor by an aws-auth mapping the cluster's mode honours",
	Doc: "Nodes authenticate with their instance profile's role. EKS lets them join only if the cluster's " +
		"authentication mode honours a mapping for that role: an access entry of type EC2_LINUX (any " +
		"family), EC2_WINDOWS (Windows families) or, for nodes nodeadm names after their instance ID, EC2 " +
		"(modes API and API_AND_CONFIG_MAP), or an aws-auth mapRoles entry with the path-less role ARN and " +
		"both system:bootstrappers and system:nodes (modes CONFIG_MAP and API_AND_CONFIG_MAP; an access " +
		"entry for the same role wins). Otherwise instances launch and never become nodes. aws-auth counts " +
		"as EKS reads it: an entry EKS drops (no usable rolearn, both rolearn and sso) maps nothing and the " +
		"message says why, while the entries around it still count. The fix is the exact " +
		"create-access-entry command or mapRoles entry. A wrong entry type or a pathed ARN is reported by " +
		"its own rule instead, a wrong username by node-username-mismatch, and a Windows mapping without " +
		"eks:kube-proxy-windows by windows-node-missing-kube-proxy-group.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		a, err := authorizationOf(c, o)
		if err != nil || a == nil {
			return nil, err
		}
		if a.covered() || a.explainedElsewhere() {
			return nil, nil
		}
		if a.awsAuthErr != nil {
			return nil, a.awsAuthErr
		}
		return []validators.Finding{{
			Field:   a.field,
			Line:    o.Fields.Line("spec", strings.TrimPrefix(a.field, "spec.")),
			Message: a.whyNotCovered(),
			Fix:     a.fix(),
		}}, nil
	},
}
