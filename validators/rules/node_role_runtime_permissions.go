package rules

import (
	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

var nodeRoleRuntimePermissions = &validators.Rule{
	ID:            "node-role-runtime-permissions",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionWarn,
	Needs:         []facts.Fact{facts.Roles, facts.Simulations, facts.VPCCNI},
	MayNeed:       []facts.Fact{facts.InstanceProfiles, facts.ClusterPodIdentityAssociations},
	Summary:       "the IAM policy simulator denies the node role a call its nodes make to run pods",
	Doc: "Once joined, nodes keep calling AWS with their role's credentials. The IAM policy simulator is " +
		"asked, for the node role with no request context: W1 ecr:GetAuthorizationToken on * (the kubelet's " +
		"ECR credential provider); W2 ecr:BatchGetImage and ecr:GetDownloadUrlForLayer on the amazon-k8s-cni " +
		"repository of EKS's registry in the cluster's region; W3 ec2:CreateNetworkInterface, " +
		"ec2:AttachNetworkInterface and ec2:AssignPrivateIpAddresses on *, and ec2:CreateTags on " +
		"network-interface/*, when aws-node runs on the node role's credentials; W4 " +
		"eks-auth:AssumeRoleForPodIdentity on the cluster when it has Pod Identity associations other than " +
		"aws-node's. Denied, the node joins but images from ECR fail with ErrImagePull unless cached on the " +
		"AMI (W1, W2), pods beyond the first network interface's addresses get no IP (W3), or pods using Pod " +
		"Identity get no AWS credentials (W4). The fix attaches AmazonEC2ContainerRegistryPullOnly (W1, W2), " +
		"AmazonEKS_CNI_Policy (W3) or AmazonEKSWorkerNodePolicy (W4).",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		s, err := nodeRoleSubjectOf(c, o, true)
		if err != nil || s == nil {
			return nil, err
		}
		return nodeRolePermissionFindings(c, o, s, runtimeRows(*s))
	},
}
