package rules

import (
	"fmt"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/analysis/noderole"
)

var instanceProfileNotFound = &validators.Rule{
	ID:            "instance-profile-not-found",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.InstanceProfiles},
	Summary:       "no instance profile of that name",
	Doc: "spec.instanceProfile must name an existing instance profile; Karpenter does not create it. " +
		"Launches fail until it exists.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		v := o.NodeClass.Spec.InstanceProfile
		if v == "" {
			return nil, nil
		}
		name := noderole.LastSegment(v)
		p, err := c.Facts.InstanceProfile(c, name)
		if err != nil {
			return nil, err
		}
		if p != nil {
			return nil, nil
		}
		f := validators.Finding{
			Field:   "spec.instanceProfile",
			Line:    o.Fields.Line("spec", "instanceProfile"),
			Message: fmt.Sprintf("instance profile %q does not exist in the account, so every launch fails", name),
			Fix:     fmt.Sprintf("aws iam create-instance-profile --instance-profile-name %s, then add the node role to it; or set spec.role and let Karpenter manage the profile", name),
		}
		// The mirror of a profile name in spec.role (node-role-not-found): a role name here.
		if c.Facts.Known(c, facts.Roles) == nil {
			if r, err := c.Facts.Role(c, name); err == nil && r != nil {
				f.Message = fmt.Sprintf("instanceProfile names %q, which is an IAM role, not an instance profile, so every launch fails", name)
				f.Fix = fmt.Sprintf("replace instanceProfile: %s with role: %s (Karpenter then manages the instance profile)", v, r.Name)
			}
		}
		return []validators.Finding{f}, nil
	},
}
