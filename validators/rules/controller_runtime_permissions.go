package rules

import (
	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

var controllerRuntimePermissions = &validators.Rule{
	ID:            "controller-runtime-permissions",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionWarn,
	Needs:         []facts.Fact{facts.KarpenterController, facts.Simulations},
	MayNeed:       []facts.Fact{facts.Roles, facts.InstanceProfiles, facts.Images, facts.SSMParameters, facts.Subnets, facts.SecurityGroups},
	Summary:       "the Karpenter controller's role may not make a call that cleanup, pricing, tagging or interruption handling needs",
	Doc: "Nodes launch, but what Karpenter does around them fails with the controller role's UnauthorizedOperation " +
		"or AccessDenied in its log: without iam:ListInstanceProfiles, deleting the EC2NodeClass hangs on its " +
		"finalizer and instance profiles are never garbage-collected; without the instance-profile actions a change " +
		"of spec.role fails; without TerminateInstances and DeleteLaunchTemplate on the cluster's tagged resources, " +
		"instances keep running after their NodeClaims are gone; without the Describe and pricing calls garbage " +
		"collection, health checks and price updates stop (prices fall back to the built-in table); without the " +
		"tagging permission nodes miss their Name and karpenter.sh/nodeclaim tags; without the interruption queue's " +
		"SQS actions (karpenter.interruptionQueue) nodes are not drained before spot interruptions. It asks the " +
		"simulator as controller-launch-permissions does, with the same limits. Fix: add the missing statement of " +
		"Karpenter's getting-started controller policy to the controller role; the finding renders it for this cluster.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		return controllerFindings(c, o, true)
	},
}
