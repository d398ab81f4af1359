package rules

import (
	"bytes"
	"encoding/json"
	"strings"
)

// This file renders the statements of Karpenter's getting-started controller policy
// (website/content/en/preview/getting-started/getting-started-with-karpenter/cloudformation.yaml in
// aws/karpenter-provider-aws) for one cluster: the fixes of the controller-permission rules are the
// statement that grants what the simulator denied, filled in with the real partition, region, account,
// cluster name, node role and queue. Each is rendered here rather than taken from a library because no
// library ships that policy as data.

// policyStatement is one IAM policy statement, its keys in the order people write them.
type policyStatement struct {
	Effect    string `json:"Effect"`
	Action    any    `json:"Action"`
	Resource  any    `json:"Resource"`
	Condition any    `json:"Condition,omitempty"`
}

// conditions is a statement's Condition block: operator → key → value (a string or a list).
type conditions map[string]map[string]any

// controllerPolicy renders the controller policy's statements for one cluster.
type controllerPolicy struct {
	partition, region, account, cluster string
	// role is the controller role's name, the role the statements are added to.
	role string
}

// ec2 returns arn:P:ec2:R:*:<resource>, the form the policy scopes EC2 resources by.
func (p controllerPolicy) ec2(resource string) string {
	return "arn:" + p.partition + ":ec2:" + p.region + ":*:" + resource
}

// instanceProfiles is the ARN of every instance profile of the account.
func (p controllerPolicy) instanceProfiles() string {
	return "arn:" + p.partition + ":iam::" + p.account + ":instance-profile/*"
}

// clusterTag is the tag key Karpenter marks what it creates for the cluster with.
func (p controllerPolicy) clusterTag() string { return "kubernetes.io/cluster/" + p.cluster }

// fix renders the command that adds statement st to the controller role as the inline policy sid.
func (p controllerPolicy) fix(sid string, st policyStatement) string {
	st.Effect = "Allow"
	var doc bytes.Buffer
	enc := json.NewEncoder(&doc)
	enc.SetEscapeHTML(false)
	// A statement of strings, lists and maps of them always encodes.
	_ = enc.Encode(struct {
		Version   string            `json:"Version"`
		Statement []policyStatement `json:"Statement"`
	}{"2012-10-17", []policyStatement{st}})
	return "aws iam put-role-policy --role-name " + p.role + " --policy-name " + sid +
		" --policy-document '" + strings.ReplaceAll(strings.TrimSpace(doc.String()), "'", `'\''`) + "'"
}

// passRole is AllowPassingInstanceRole for the node role.
func (p controllerPolicy) passRole(nodeRoleARN string) string {
	return p.fix("AllowPassingInstanceRole", policyStatement{
		Action: "iam:PassRole", Resource: nodeRoleARN,
		Condition: conditions{"StringEquals": {"iam:PassedToService": ec2Principal(p.partition)}},
	})
}

// instanceActionsWithTags is AllowScopedEC2InstanceActionsWithTags: launching and creating launch
// templates, when the request tags the new resources for the cluster and a NodePool.
func (p controllerPolicy) instanceActionsWithTags() string {
	return p.fix("AllowScopedEC2InstanceActionsWithTags", policyStatement{
		Action:   []string{"ec2:RunInstances", "ec2:CreateFleet", "ec2:CreateLaunchTemplate"},
		Resource: p.taggedOnCreate(),
		Condition: conditions{
			"StringEquals": {"aws:RequestTag/" + p.clusterTag(): "owned", "aws:RequestTag/eks:eks-cluster-name": p.cluster},
			"StringLike":   {"aws:RequestTag/karpenter.sh/nodepool": "*"},
		},
	})
}

// resourceCreationTagging is AllowScopedResourceCreationTagging: tagging what the launch calls create.
func (p controllerPolicy) resourceCreationTagging() string {
	return p.fix("AllowScopedResourceCreationTagging", policyStatement{
		Action:   "ec2:CreateTags",
		Resource: p.taggedOnCreate(),
		Condition: conditions{
			"StringEquals": {
				"aws:RequestTag/" + p.clusterTag(): "owned", "aws:RequestTag/eks:eks-cluster-name": p.cluster,
				"ec2:CreateAction": []string{"RunInstances", "CreateFleet", "CreateLaunchTemplate"},
			},
			"StringLike": {"aws:RequestTag/karpenter.sh/nodepool": "*"},
		},
	})
}

// taggedOnCreate are the resources the launch calls create and tag.
func (p controllerPolicy) taggedOnCreate() []string {
	return []string{p.ec2("fleet/*"), p.ec2("instance/*"), p.ec2("volume/*"), p.ec2("network-interface/*"), p.ec2("launch-template/*"), p.ec2("spot-instances-request/*")}
}

// launchTemplateAccess is AllowScopedEC2LaunchTemplateAccessActions: launching from the cluster's
// launch templates.
func (p controllerPolicy) launchTemplateAccess() string {
	return p.fix("AllowScopedEC2LaunchTemplateAccessActions", policyStatement{
		Action:   []string{"ec2:RunInstances", "ec2:CreateFleet"},
		Resource: p.ec2("launch-template/*"),
		Condition: conditions{
			"StringEquals": {"aws:ResourceTag/" + p.clusterTag(): "owned"},
			"StringLike":   {"aws:ResourceTag/karpenter.sh/nodepool": "*"},
		},
	})
}

// instanceAccess is AllowScopedEC2InstanceAccessActions: launching into subnets and security groups,
// from images and snapshots.
func (p controllerPolicy) instanceAccess() string {
	return p.fix("AllowScopedEC2InstanceAccessActions", policyStatement{
		Action: []string{"ec2:RunInstances", "ec2:CreateFleet"},
		Resource: []string{
			"arn:" + p.partition + ":ec2:" + p.region + "::image/*", "arn:" + p.partition + ":ec2:" + p.region + "::snapshot/*",
			p.ec2("security-group/*"), p.ec2("subnet/*"), p.ec2("capacity-reservation/*"), p.ec2("placement-group/*"),
		},
	})
}

// regionalRead is AllowRegionalReadActions: the Describe calls, in the cluster's region.
func (p controllerPolicy) regionalRead() string {
	return p.fix("AllowRegionalReadActions", policyStatement{
		Action: []string{
			"ec2:DescribeCapacityReservations", "ec2:DescribeImages", "ec2:DescribeInstances", "ec2:DescribeInstanceStatus",
			"ec2:DescribeInstanceTypeOfferings", "ec2:DescribeInstanceTypes", "ec2:DescribeLaunchTemplates",
			"ec2:DescribePlacementGroups", "ec2:DescribeSecurityGroups", "ec2:DescribeSpotPriceHistory", "ec2:DescribeSubnets",
		},
		Resource:  "*",
		Condition: conditions{"StringEquals": {"aws:RequestedRegion": p.region}},
	})
}

// ssmRead is AllowSSMReadActions: the public parameters aliases resolve through.
func (p controllerPolicy) ssmRead() string {
	return p.fix("AllowSSMReadActions", policyStatement{
		Action: "ssm:GetParameter", Resource: "arn:" + p.partition + ":ssm:" + p.region + "::parameter/aws/service/*",
	})
}

// amiParameterRead grants reading the class's own ssmParameter terms, which the getting-started
// policy does not cover (it reads only /aws/service/*).
func (p controllerPolicy) amiParameterRead(arns []string) string {
	return p.fix("AllowAMIParameterRead", policyStatement{Action: "ssm:GetParameter", Resource: arns})
}

// instanceProfileRead is AllowInstanceProfileReadActions.
func (p controllerPolicy) instanceProfileRead() string {
	return p.fix("AllowInstanceProfileReadActions", policyStatement{Action: "iam:GetInstanceProfile", Resource: p.instanceProfiles()})
}

// instanceProfileCreation is AllowScopedInstanceProfileCreationActions.
func (p controllerPolicy) instanceProfileCreation() string {
	return p.fix("AllowScopedInstanceProfileCreationActions", policyStatement{
		Action:   []string{"iam:CreateInstanceProfile"},
		Resource: p.instanceProfiles(),
		Condition: conditions{
			"StringEquals": {
				"aws:RequestTag/" + p.clusterTag(): "owned", "aws:RequestTag/eks:eks-cluster-name": p.cluster,
				"aws:RequestTag/topology.kubernetes.io/region": p.region,
			},
			"StringLike": {"aws:RequestTag/karpenter.k8s.aws/ec2nodeclass": "*"},
		},
	})
}

// instanceProfileTagging is AllowScopedInstanceProfileTagActions.
func (p controllerPolicy) instanceProfileTagging() string {
	return p.fix("AllowScopedInstanceProfileTagActions", policyStatement{
		Action:   []string{"iam:TagInstanceProfile"},
		Resource: p.instanceProfiles(),
		Condition: conditions{
			"StringEquals": {
				"aws:ResourceTag/" + p.clusterTag(): "owned", "aws:ResourceTag/topology.kubernetes.io/region": p.region,
				"aws:RequestTag/" + p.clusterTag(): "owned", "aws:RequestTag/eks:eks-cluster-name": p.cluster,
				"aws:RequestTag/topology.kubernetes.io/region": p.region,
			},
			"StringLike": {"aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass": "*", "aws:RequestTag/karpenter.k8s.aws/ec2nodeclass": "*"},
		},
	})
}

// instanceProfileActions is AllowScopedInstanceProfileActions: adding and removing the role, deleting
// the profile.
func (p controllerPolicy) instanceProfileActions() string {
	return p.fix("AllowScopedInstanceProfileActions", policyStatement{
		Action:   []string{"iam:AddRoleToInstanceProfile", "iam:RemoveRoleFromInstanceProfile", "iam:DeleteInstanceProfile"},
		Resource: p.instanceProfiles(),
		Condition: conditions{
			"StringEquals": {"aws:ResourceTag/" + p.clusterTag(): "owned", "aws:ResourceTag/topology.kubernetes.io/region": p.region},
			"StringLike":   {"aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass": "*"},
		},
	})
}

// describeCluster is AllowAPIServerEndpointDiscovery.
func (p controllerPolicy) describeCluster() string {
	return p.fix("AllowAPIServerEndpointDiscovery", policyStatement{
		Action: "eks:DescribeCluster", Resource: "arn:" + p.partition + ":eks:" + p.region + ":" + p.account + ":cluster/" + p.cluster,
	})
}

// listInstanceProfiles is AllowUnscopedInstanceProfileListAction.
func (p controllerPolicy) listInstanceProfiles() string {
	return p.fix("AllowUnscopedInstanceProfileListAction", policyStatement{Action: "iam:ListInstanceProfiles", Resource: "*"})
}

// scopedDeletion is AllowScopedDeletion: terminating the cluster's instances and deleting its launch
// templates.
func (p controllerPolicy) scopedDeletion() string {
	return p.fix("AllowScopedDeletion", policyStatement{
		Action:   []string{"ec2:TerminateInstances", "ec2:DeleteLaunchTemplate"},
		Resource: []string{p.ec2("instance/*"), p.ec2("launch-template/*")},
		Condition: conditions{
			"StringEquals": {"aws:ResourceTag/" + p.clusterTag(): "owned"},
			"StringLike":   {"aws:ResourceTag/karpenter.sh/nodepool": "*"},
		},
	})
}

// pricingRead is AllowPricingReadActions.
func (p controllerPolicy) pricingRead() string {
	return p.fix("AllowPricingReadActions", policyStatement{Action: "pricing:GetProducts", Resource: "*"})
}

// resourceTagging is AllowScopedResourceTagging: the tagging controller's tags on running instances.
func (p controllerPolicy) resourceTagging() string {
	return p.fix("AllowScopedResourceTagging", policyStatement{
		Action:   "ec2:CreateTags",
		Resource: p.ec2("instance/*"),
		Condition: conditions{
			"StringEquals":              {"aws:ResourceTag/" + p.clusterTag(): "owned"},
			"StringLike":                {"aws:ResourceTag/karpenter.sh/nodepool": "*"},
			"StringEqualsIfExists":      {"aws:RequestTag/eks:eks-cluster-name": p.cluster},
			"ForAllValues:StringEquals": {"aws:TagKeys": taggingControllerKeys()},
		},
	})
}

// interruptionQueue is AllowInterruptionQueueActions for the queue of that ARN.
func (p controllerPolicy) interruptionQueue(queueARN string) string {
	return p.fix("AllowInterruptionQueueActions", policyStatement{
		Action: []string{"sqs:DeleteMessage", "sqs:GetQueueUrl", "sqs:ReceiveMessage"}, Resource: queueARN,
	})
}

// ec2Principal is EC2's service principal in a partition.
func ec2Principal(partition string) string {
	if partition == "aws-cn" {
		return "ec2.amazonaws.com.cn"
	}
	return "ec2.amazonaws.com"
}

// taggingControllerKeys are the tags Karpenter's tagging controller adds to running instances.
func taggingControllerKeys() []string {
	return []string{"eks:eks-cluster-name", "karpenter.sh/nodeclaim", "Name"}
}
