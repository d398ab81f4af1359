package rules

import (
	"fmt"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/analysis/noderole"
)

var instanceProfileNoRole = &validators.Rule{
	ID:            "instance-profile-no-role",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.InstanceProfiles},
	Summary:       "the instance profile holds no role",
	Doc: "An instance profile without a role gives the instance no credentials, so the kubelet cannot " +
		"authenticate and the node never joins. Add the node role with aws iam add-role-to-instance-profile.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		v := o.NodeClass.Spec.InstanceProfile
		if v == "" {
			return nil, nil
		}
		p, err := c.Facts.InstanceProfile(c, noderole.LastSegment(v))
		if err != nil {
			return nil, err
		}
		if p == nil || len(p.Roles) > 0 {
			return nil, nil
		}
		return []validators.Finding{{
			Field:   "spec.instanceProfile",
			Line:    o.Fields.Line("spec", "instanceProfile"),
			Message: fmt.Sprintf("instance profile %q holds no role, so nodes get no credentials and never join", p.Name),
			Fix:     fmt.Sprintf("aws iam add-role-to-instance-profile --instance-profile-name %s --role-name <node role>", p.Name),
		}}, nil
	},
}
