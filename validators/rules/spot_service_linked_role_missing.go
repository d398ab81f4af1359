package rules

import (
	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

var spotServiceLinkedRoleMissing = &validators.Rule{
	ID:            "spot-service-linked-role-missing",
	Kinds:         []string{validators.KindNodePool},
	DefaultAction: config.ActionWarn,
	Needs:         []facts.Fact{facts.Roles},
	Summary:       "the pool allows spot and the account has no `AWSServiceRoleForEC2Spot`",
	Doc: "Spot launches need the account's service-linked role AWSServiceRoleForEC2Spot; without it every " +
		"spot launch fails with AuthFailure.ServiceLinkedRoleCreationNotPermitted unless the controller may " +
		"create it, and Karpenter keeps retrying other offerings. A pool allows spot when its " +
		"karpenter.sh/capacity-type requirements admit it, and also when it has none: Karpenter then " +
		"prefers spot. Create the role once per account.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		idx, ok := allowsSpot(o.NodePool.Spec.Template.Spec.Requirements)
		if !ok {
			return nil, nil
		}
		r, err := c.Facts.Role(c, spotServiceLinkedRole)
		if err != nil {
			return nil, err
		}
		if r != nil {
			return nil, nil
		}
		account := "the account"
		if cl, err := c.Facts.Cluster(c); err == nil && cl.AccountID != "" {
			account = "account " + cl.AccountID
		}
		allows := "this pool allows spot capacity"
		var field string
		var line int
		switch {
		case idx >= 0:
			field, line = objects.Path("spec", "template", "spec", "requirements", idx), o.Fields.Line("spec", "template", "spec", "requirements", idx)
		case len(o.NodePool.Spec.Template.Spec.Requirements) > 0:
			allows = "this pool has no " + capacityTypeKey + " requirement, so Karpenter launches spot capacity first"
			field, line = "spec.template.spec.requirements", o.Fields.Line("spec", "template", "spec", "requirements")
		default:
			allows = "this pool has no " + capacityTypeKey + " requirement, so Karpenter launches spot capacity first"
			field, line = "spec.template.spec", o.Fields.Line("spec", "template", "spec")
		}
		return []validators.Finding{{
			Field:   field,
			Line:    line,
			Message: allows + ", but " + account + " has no service-linked role " + spotServiceLinkedRole + ", so spot launches fail with AuthFailure.ServiceLinkedRoleCreationNotPermitted (unless the Karpenter controller may create it)",
			Fix:     "aws iam create-service-linked-role --aws-service-name spot.amazonaws.com",
		}}, nil
	},
}

// spotServiceLinkedRole is the service-linked role spot launches need.
const spotServiceLinkedRole = "AWSServiceRoleForEC2Spot"
