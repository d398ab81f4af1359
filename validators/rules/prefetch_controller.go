package rules

import (
	"context"
	"fmt"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

// controllerPermissions adds the questions the controller-permission rules ask about an EC2NodeClass:
// once the controller's role and the simulations can be had, the rows controllerRows gives (it asks
// the controller's role, the cluster, the node role, the images, subnets and security groups as the
// rules do, and takes the rows from the catalog's memory as they do), then each row of the rules that
// run, all at once.
func (q *aheadQuestions) controllerPermissions(c *validators.Context, o *objects.Object, rf *ruleFacts) {
	launch, runtime := rf.runs(controllerLaunchPermissions.ID), rf.runs(controllerRuntimePermissions.ID)
	if !launch && !runtime {
		return
	}
	cfg, input, findPools := c.Config, c.Input, c.FindNodePools
	cache := validators.Shared(c, controllerRowCache)
	q.add(fmt.Sprintf("controller permissions %p", o), func(ctx context.Context) {
		if q.p.Known(ctx, facts.KarpenterController) != nil || q.p.Known(ctx, facts.Simulations) != nil {
			return // the rules do not run
		}
		// A Context of its own: questions run concurrently, and an evaluation's memos are not shared.
		set := rememberedControllerRows(&validators.Context{Context: ctx, Config: cfg, Facts: q.p, Input: input, FindNodePools: findPools}, o, cache)
		if set.err != nil {
			return
		}
		var rows []func(context.Context)
		for _, r := range set.rows {
			if r.degraded() && runtime || !r.degraded() && launch {
				for _, call := range r.calls() {
					rows = append(rows, func(ctx context.Context) { _, _ = q.p.Simulate(ctx, call) })
				}
			}
		}
		facts.Ask(ctx, facts.AskLimit, rows...)
	})
}

// controllerPermissionRules are the rules about the Karpenter controller's permissions.
func controllerPermissionRules() []*validators.Rule {
	return []*validators.Rule{controllerLaunchPermissions, controllerRuntimePermissions}
}
