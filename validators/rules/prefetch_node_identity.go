package rules

import (
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

// nodeIdentity adds the questions the node-identity rules ask about an EC2NodeClass (the node role's
// trust policy and its simulations).
func (q *aheadQuestions) nodeIdentity(c *validators.Context, o *objects.Object, rf *ruleFacts) {}

// nodeIdentityRules are the rules about the node role's identity and permissions (join readiness).
func nodeIdentityRules() []*validators.Rule { return nil }
