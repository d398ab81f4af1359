package rules

import (
	"fmt"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/analysis/noderole"
)

var nodeRoleNotFound = &validators.Rule{
	ID:            "node-role-not-found",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.Roles},
	MayNeed:       []facts.Fact{facts.InstanceProfiles},
	Summary:       "`spec.role` names no IAM role",
	Doc: "Karpenter creates an instance profile for spec.role; a role that does not exist makes every launch " +
		"fail (karpenter-provider-aws issue 8538). A common slip is an instance profile name in spec.role: " +
		"the message says so and points to spec.instanceProfile.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		spec := o.NodeClass.Spec
		if spec.Role == "" {
			return nil, nil
		}
		name := noderole.LastSegment(spec.Role)
		role, err := c.Facts.Role(c, name)
		if err != nil {
			return nil, err
		}
		if role != nil {
			return nil, nil
		}
		f := validators.Finding{
			Field:   "spec.role",
			Line:    o.Fields.Line("spec", "role"),
			Message: fmt.Sprintf("spec.role names %q, but the account has no IAM role of that name, so every launch fails", name),
			Fix:     "create the role, or correct the name",
		}
		if err := c.Facts.Known(c, facts.InstanceProfiles); err == nil {
			p, err := c.Facts.InstanceProfile(c, name)
			if err != nil {
				return nil, err
			}
			if p != nil {
				f.Message = fmt.Sprintf("spec.role names %q, which is an instance profile, not a role: Karpenter would create a profile for a role that does not exist", name)
				f.Fix = fmt.Sprintf("replace role: %s with instanceProfile: %s", spec.Role, p.Name)
				if len(p.Roles) == 1 {
					f.Fix += fmt.Sprintf(", or use role: %s (the role inside it)", p.Roles[0])
				}
			}
		}
		return []validators.Finding{f}, nil
	},
}
