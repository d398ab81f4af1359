package rules

import (
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

// controllerPermissions adds the questions the controller-permission rules ask about an EC2NodeClass
// (the controller's role and its simulations).
func (q *aheadQuestions) controllerPermissions(c *validators.Context, o *objects.Object, rf *ruleFacts) {
}

// controllerPermissionRules are the rules about the Karpenter controller's permissions.
func controllerPermissionRules() []*validators.Rule { return nil }
