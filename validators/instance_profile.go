package validators

import (
	"fmt"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
)

// This file holds the instance-profile rules that need IAM facts. The role inside a profile goes
// through the same authorization rules as spec.role (node_role.go).

var instanceProfileNotFound = &Rule{
	ID:            "instance-profile-not-found",
	Kinds:         []string{KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.InstanceProfiles},
	Summary:       "no instance profile of that name",
	Doc: "spec.instanceProfile must name an existing instance profile; Karpenter does not create it. " +
		"Launches fail until it exists.",
	Check: func(c *Context, o *objects.Object) []Finding {
		v := o.NodeClass.Spec.InstanceProfile
		if v == "" {
			return nil
		}
		name := lastSegment(v)
		p, err := c.Facts.InstanceProfile(c, name)
		if err != nil {
			return c.unknownFact(err)
		}
		if p != nil {
			return nil
		}
		f := Finding{
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
		return []Finding{f}
	},
}

var instanceProfileNoRole = &Rule{
	ID:            "instance-profile-no-role",
	Kinds:         []string{KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.InstanceProfiles},
	Summary:       "the instance profile holds no role",
	Doc: "An instance profile without a role gives the instance no credentials, so the kubelet cannot " +
		"authenticate and the node never joins. Add the node role with aws iam add-role-to-instance-profile.",
	Check: func(c *Context, o *objects.Object) []Finding {
		v := o.NodeClass.Spec.InstanceProfile
		if v == "" {
			return nil
		}
		p, err := c.Facts.InstanceProfile(c, lastSegment(v))
		if err != nil {
			return c.unknownFact(err)
		}
		if p == nil || len(p.Roles) > 0 {
			return nil
		}
		return []Finding{{
			Field:   "spec.instanceProfile",
			Line:    o.Fields.Line("spec", "instanceProfile"),
			Message: fmt.Sprintf("instance profile %q holds no role, so nodes get no credentials and never join", p.Name),
			Fix:     fmt.Sprintf("aws iam add-role-to-instance-profile --instance-profile-name %s --role-name <node role>", p.Name),
		}}
	},
}
