package validators

import (
	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
)

const spotServiceLinkedRole = "AWSServiceRoleForEC2Spot"

var spotServiceLinkedRoleMissing = &Rule{
	ID:            "spot-service-linked-role-missing",
	Kinds:         []string{KindNodePool},
	DefaultAction: config.ActionWarn,
	Needs:         []facts.Fact{facts.Roles},
	Summary:       "the pool allows spot and the account has no `AWSServiceRoleForEC2Spot`",
	Doc: "Spot launches need the account's service-linked role AWSServiceRoleForEC2Spot; without it every " +
		"spot launch fails with AuthFailure.ServiceLinkedRoleCreationNotPermitted unless the controller may " +
		"create it. Create it once per account.",
	Check: func(c *Context, o *objects.Object) []Finding {
		idx, ok := allowsSpot(o.NodePool.Spec.Template.Spec.Requirements)
		if !ok {
			return nil
		}
		r, err := c.Facts.Role(c, spotServiceLinkedRole)
		if err != nil {
			return c.unknownFact(err)
		}
		if r != nil {
			return nil
		}
		account := "the account"
		if cl, err := c.Facts.Cluster(c); err == nil && cl.AccountID != "" {
			account = "account " + cl.AccountID
		}
		return []Finding{{
			Field:   objects.Path("spec", "template", "spec", "requirements", idx),
			Line:    o.Fields.Line("spec", "template", "spec", "requirements", idx),
			Message: "this pool allows spot capacity, but " + account + " has no service-linked role " + spotServiceLinkedRole + ", so spot launches fail with AuthFailure.ServiceLinkedRoleCreationNotPermitted (unless the Karpenter controller may create it)",
			Fix:     "aws iam create-service-linked-role --aws-service-name spot.amazonaws.com",
		}}
	},
}

// allowsSpot reports whether the capacity-type requirement admits spot, and its index. Without the
// requirement Karpenter launches on-demand only.
func allowsSpot(reqs []objects.Requirement) (int, bool) {
	for i, r := range reqs {
		if r.Key != "karpenter.sh/capacity-type" {
			continue
		}
		has := false
		for _, v := range r.Values {
			has = has || v == "spot"
		}
		switch r.Operator {
		case "In":
			return i, has
		case "NotIn":
			return i, !has
		case "Exists":
			return i, true
		}
	}
	return 0, false
}
