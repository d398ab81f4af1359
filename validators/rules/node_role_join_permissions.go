package rules

import (
	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

var nodeRoleJoinPermissions = &validators.Rule{
	ID:            "node-role-join-permissions",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.Roles, facts.Simulations, facts.VPCCNI},
	MayNeed:       []facts.Fact{facts.InstanceProfiles},
	Summary:       "the IAM policy simulator denies the node role a call its nodes make before they can join",
	Doc: "Nodes call AWS with their role's credentials while they join. The IAM policy simulator is asked, " +
		"for the node role with no request context: J1 ec2:DescribeInstances on * when nodeadm boots the " +
		"class (AL2023, or Custom with a NodeConfig) and names nodes after their private DNS name; J2 " +
		"ec2:DescribeNetworkInterfaces on * when aws-node runs on the node role's credentials; J3 " +
		"eks-auth:AssumeRoleForPodIdentity on the cluster when aws-node uses Pod Identity. Denied, " +
		"instances run but without J1 the node never appears (nodeadm retries DescribeInstances for 10 " +
		"minutes, then init fails: journalctl -u nodeadm-config), and without J2 or J3 it stays NotReady " +
		"with \"cni plugin not initialized\" (aws-node never writes the CNI configuration). A denial " +
		"whose policy needs context keys the question did not carry is a warning. One denied row fires " +
		"even when others have no answer. The fix attaches AmazonEKSWorkerNodePolicy (J1, J3) or " +
		"AmazonEKS_CNI_Policy (J2).",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		s, err := nodeRoleSubjectOf(c, o, false)
		if err != nil || s == nil {
			return nil, err
		}
		return nodeRolePermissionFindings(c, o, s, joinRows(*s))
	},
}
