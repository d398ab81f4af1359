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
		"create it. Create it once per account.",
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
		return []validators.Finding{{
			Field:   objects.Path("spec", "template", "spec", "requirements", idx),
			Line:    o.Fields.Line("spec", "template", "spec", "requirements", idx),
			Message: "this pool allows spot capacity, but " + account + " has no service-linked role " + spotServiceLinkedRole + ", so spot launches fail with AuthFailure.ServiceLinkedRoleCreationNotPermitted (unless the Karpenter controller may create it)",
			Fix:     "aws iam create-service-linked-role --aws-service-name spot.amazonaws.com",
		}}, nil
	},
}

// spotServiceLinkedRole is the service-linked role spot launches need.
const spotServiceLinkedRole = "AWSServiceRoleForEC2Spot"
