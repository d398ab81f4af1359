package rules

import (
	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

var controllerLaunchPermissions = &validators.Rule{
	ID:            "controller-launch-permissions",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.KarpenterController, facts.Simulations},
	MayNeed:       []facts.Fact{facts.Roles, facts.InstanceProfiles, facts.Images, facts.SSMParameters, facts.Subnets, facts.SecurityGroups},
	Summary:       "the Karpenter controller's role may not make a call every launch from the class needs",
	Doc: "Karpenter launches a class's nodes with its controller's IAM role: it passes the node role to EC2 " +
		"(iam:PassRole), creates launch templates and fleets tagged for the cluster and the NodePool, launches into " +
		"the class's subnets and security groups from its images, reads the alias's SSM parameters, creates the " +
		"instance profile for spec.role and, for AL2023, reads the cluster's service CIDR. When the role may not make " +
		"one of those calls, the EC2NodeClass reports ValidationSucceeded=False (CreateLaunchTemplateAuthCheckFailed, " +
		"CreateFleetAuthCheckFailed, RunInstancesAuthCheckFailed, ClusterCIDRResolutionFailed) or never becomes Ready " +
		"(AMIsReady, InstanceProfileReady), every NodeClaim fails with UnauthorizedOperation (\"not authorized to " +
		"perform: iam:PassRole\"), and pods stay Pending. The rule asks the IAM policy simulator each call with the " +
		"tags Karpenter sends, once per NodePool that uses the class; a denial whose policy needs context keys the " +
		"simulator was not given is a warning, and a cross-account controller role (Pod Identity targetRoleArn) is " +
		"not evaluated. The simulator does not see a Pod Identity session policy: its denials stand, its allows may " +
		"still be narrowed. Fix: add the missing statement of Karpenter's getting-started controller policy to the " +
		"controller role; the finding renders it for this cluster.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		return controllerFindings(c, o, false)
	},
}
