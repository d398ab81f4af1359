package rules

import (
	"fmt"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/analysis/noderole"
	"github.com/karpenter-guard/karpenter-guard/validators/analysis/trustpolicy"
)

var nodeRoleTrustPolicy = &validators.Rule{
	ID:            "node-role-trust-policy",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.Roles},
	MayNeed:       []facts.Fact{facts.InstanceProfiles},
	Summary:       "the node role's trust policy does not let EC2 assume it",
	Doc: "EC2 hands an instance its role's credentials only if the role's trust policy lets the EC2 service " +
		"assume it: an Allow statement for sts:AssumeRole (or sts:*, *) with Principal \"*\" or Service " +
		"ec2.amazonaws.com (ec2.amazonaws.com.cn), and no unconditional Deny of it. Otherwise instances " +
		"launch and run, but IMDS returns 404 for the role's credentials, the kubelet cannot authenticate " +
		"and the node never appears. When the only Allow carries a Condition, or the policy uses " +
		"NotPrincipal or NotAction, the finding is a warning (conditions are not evaluated). A role whose " +
		"trust policy is not known is not evaluated. The fix is the exact update-assume-role-policy command.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		r, err := noderole.Resolve(c, o)
		if err != nil || r.Role == nil {
			return nil, err
		}
		role := r.Role
		if strings.TrimSpace(role.AssumeRolePolicyDocument) == "" {
			return nil, facts.Unknown(facts.Roles, fmt.Sprintf("no trust policy (assumeRolePolicyDocument) of role %s", role.Name))
		}
		v, err := trustpolicy.Of(c, role.AssumeRolePolicyDocument)
		if err != nil {
			return nil, facts.Unknown(facts.Roles, fmt.Sprintf("the trust policy of role %s cannot be read (%s)", role.Name, err))
		}
		if v.Denied == "" && v.Allowed {
			return nil, nil
		}
		var why string
		var atMost config.Action
		switch {
		case v.Denied != "":
			why = fmt.Sprintf("its trust policy denies sts:AssumeRole to the EC2 service in %s", v.Denied)
		case v.Conditional:
			why = "its trust policy lets the EC2 service assume it only under a Condition, which may not hold for EC2"
			atMost = config.ActionWarn
		case v.Negated:
			why = "its trust policy has no Allow of sts:AssumeRole for the EC2 service except through NotPrincipal or NotAction, which are not evaluated"
			atMost = config.ActionWarn
		default:
			why = "its trust policy has no Allow statement for sts:AssumeRole with Principal Service " + trustpolicy.EC2Service(trustpolicy.ARNPartition(role.ARN))
		}
		msg := fmt.Sprintf("node role %s cannot be assumed by EC2: %s, so instances launch but IMDS serves no credentials for the role, the kubelet cannot authenticate and the node never joins",
			role.ARN, why)
		if atMost != "" {
			msg = fmt.Sprintf("node role %s may not be assumable by EC2: %s; if EC2 cannot assume it, instances launch but IMDS serves no credentials for the role, the kubelet cannot authenticate and the node never joins",
				role.ARN, why)
		}
		return []validators.Finding{{
			Field:   r.Field,
			Line:    o.Fields.Line("spec", strings.TrimPrefix(r.Field, "spec.")),
			Message: msg,
			Fix:     fmt.Sprintf("aws iam update-assume-role-policy --role-name %s --policy-document '%s'", role.Name, trustpolicy.EC2Policy(trustpolicy.ARNPartition(role.ARN))),
			AtMost:  atMost,
		}}, nil
	},
}
