package rules

import (
	"fmt"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/analysis/noderole"
)

var awsAuthRoleARNHasPath = &validators.Rule{
	ID:            "aws-auth-rolearn-has-path",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.AWSAuth, facts.Roles},
	MayNeed:       []facts.Fact{facts.InstanceProfiles, facts.ClusterAuthenticationMode, facts.AccessEntries},
	Summary:       "the only aws-auth mapping of the node role uses the ARN with the role's path",
	Doc: "EKS turns the node's STS identity into a role ARN without the IAM path, so a mapRoles entry " +
		"written with the path (arn:aws:iam::…:role/team/NodeRole) never matches. Write the path-less ARN. " +
		"Not reported where the mapping decides nothing: mode API, or an access entry of the role (it wins); " +
		"not evaluated while the cluster's authentication mode is unknown.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		r, err := noderole.Resolve(c, o)
		if err != nil || r.Role == nil {
			return nil, err
		}
		data, err := c.Facts.AWSAuth(c)
		if err != nil {
			return nil, err
		}
		m := noderole.MatchMappings(data, r.Role)
		if m.Pathless != nil || m.Pathed == nil {
			return nil, nil
		}
		// The mapping decides only in a mode that reads aws-auth and when no access entry of the role
		// wins over it (docs/design.md §3); otherwise node-role-not-authorized or -access-entry-type report.
		// Without the mode nothing says the mapping matters: not evaluated, never a deny on less than
		// the rule needs.
		if err := c.Facts.Known(c, facts.ClusterAuthenticationMode); err != nil {
			return nil, err
		}
		a, err := authorizationOf(c, o)
		if err != nil || a == nil {
			return nil, err
		}
		if !a.cluster.HonoursAWSAuth() || a.entry != nil {
			return nil, nil
		}
		return []validators.Finding{{
			Field: r.Field,
			Line:  o.Fields.Line("spec", strings.TrimPrefix(r.Field, "spec.")),
			Message: fmt.Sprintf("aws-auth maps node role %s only as rolearn %s (mapRoles line %d), with the role's path %s: EKS sees nodes as %s, so that entry never matches",
				r.Role.Name, m.Pathed.RoleARN, m.Pathed.Line, r.Role.Path, r.Role.PathlessARN()),
			Fix: fmt.Sprintf("in aws-auth mapRoles, replace rolearn: %s with rolearn: %s", m.Pathed.RoleARN, r.Role.PathlessARN()),
		}}, nil
	},
}
