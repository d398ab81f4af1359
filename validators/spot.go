package validators

import (
	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
)

var spotServiceLinkedRoleMissing = &Rule{
	ID:            "spot-service-linked-role-missing",
	Kinds:         []string{KindNodePool},
	DefaultAction: config.ActionWarn,
	Needs:         []facts.Fact{facts.Roles},
	Summary:       "the pool allows spot and the account has no `AWSServiceRoleForEC2Spot`",
	Doc: "Spot launches need the account's service-linked role AWSServiceRoleForEC2Spot; without it every " +
		"spot launch fails with AuthFailure.ServiceLinkedRoleCreationNotPermitted unless the controller may " +
		"create it. Create it once per account.",
}
