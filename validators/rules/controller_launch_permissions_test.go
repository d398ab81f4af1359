package rules_test

import (
	"strings"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/facts"
)

func TestControllerLaunchPermissions(t *testing.T) {
	class := nodeClass("default", eksSpec)
	pooled := docs(class, nodePool("default", "default", ""))
	twoPools := docs(class, nodePool("default", "default", ""), capacityPool("spot", ""))
	byProfile := nodeClass("default", withRole("instanceProfile: "+nodeProfile+"\n"))
	golden := nodeClass("golden", withAMI("amiFamily: AL2023\namiSelectorTerms:\n  - ssmParameter: /platform/ami/golden\n"))
	goldenSSM := section("ssmParameters", defaultSSM+"  /platform/ami/golden: "+teamImage+"\n")
	china := []factsOpt{clusterField("partition", "aws-cn"), clusterField("region", "cn-north-1")}
	base := controllerFacts(nil)
	testRule(t, "controller-launch-permissions", []ruleCase{
		// Fires.
		{name: "pass-role-denied", fires: 1, in: pooled, facts: simulated(t, pooled, "", base, denied("iam:PassRole", ":role/"+nodeRole))},
		{name: "pass-role-explicitly-denied", fires: 1, in: pooled, facts: simulated(t, pooled, "", base,
			answer{action: "iam:PassRole", resource: ":role/" + nodeRole, decision: facts.DecisionExplicitDeny})},
		{name: "create-fleet-denied-on-a-subnet", fires: 1, in: pooled, facts: simulated(t, pooled, "", base, denied("ec2:CreateFleet", "subnet/"+privateB))},
		{name: "run-instances-denied-on-the-images", fires: 1, in: pooled, facts: simulated(t, pooled, "", base, denied("ec2:RunInstances", "image/"+al2023arm))},
		{name: "launch-template-creation-denied", fires: 1, in: pooled, facts: simulated(t, pooled, "", base, denied("ec2:CreateLaunchTemplate", ""))},
		{name: "instance-profile-creation-denied", fires: 1, in: pooled, facts: simulated(t, pooled, "", base, denied("iam:CreateInstanceProfile", ""))},
		{name: "alias-parameter-denied", fires: 1, in: pooled, facts: simulated(t, pooled, "", base, denied("ssm:GetParameter", "arm64/standard/recommended/image_id"))},
		{name: "own-parameter-denied", fires: 1, in: golden, facts: simulated(t, golden, "", controllerFacts([]factsOpt{goldenSSM}), denied("ssm:GetParameter", ":parameter/platform/ami/golden"))},
		{name: "describe-cluster-denied-for-al2023", fires: 1, in: pooled, facts: simulated(t, pooled, "", base, denied("eks:DescribeCluster", ""))},
		{name: "several-rows-denied", fires: 2, in: pooled, facts: simulated(t, pooled, "", base, denied("iam:PassRole", ""), denied("ec2:DescribeImages", ""))},
		{name: "pass-role-of-the-profile-role-denied", fires: 1, in: byProfile, facts: simulated(t, byProfile, "", base, denied("iam:PassRole", ""))},
		{name: "china-partition", fires: 1, in: pooled, facts: simulated(t, pooled, "", controllerFacts(china), denied("iam:PassRole", ""))},
		// Capped at warn: the policy needs a context key the question did not carry.
		{name: "denial-with-missing-context", fires: 1, in: pooled, facts: simulated(t, pooled, "", base,
			answer{action: "ec2:CreateFleet", resource: "fleet/*", decision: facts.DecisionImplicitDeny, missing: []string{"aws:SourceVpce"}})},
		// Partial answers: a denial proves the failure while another row has no answer.
		{name: "pass-role-denied-while-images-unknown", snapshotOnly: "the AWS fake answers every question the snapshot leaves out (implicitDeny); only a snapshot can leave one unknown", fires: 1, in: pooled, facts: simulated(t, pooled, "", base,
			denied("iam:PassRole", ""), unanswered("ec2:RunInstances", "snapshot/*"))},
		// Per NodePool: the spot pool's tags are denied, the on-demand pool's allowed.
		{name: "one-pool-of-two-denied", fires: 1, in: twoPools, facts: simulated(t, twoPools, "", base,
			answer{action: "ec2:CreateFleet", resource: "spot-instances-request/*", decision: facts.DecisionImplicitDeny, pool: "spot"})},
		{name: "no-pool-tags-empty-nodepool", fires: 1, in: class, facts: simulated(t, class, "", base,
			answer{action: "ec2:CreateLaunchTemplate", decision: facts.DecisionImplicitDeny, pool: "-"})},
		// Session policies narrow allows; a denial stands.
		{name: "session-policy-denial-stands", fires: 1, in: pooled, facts: simulated(t, pooled, "", controllerFacts(nil, "sessionPolicy: true"), denied("iam:PassRole", ""))},
		// Hand-written in the snapshot format: only L1 answered, and denied.
		{name: "hand-written-pass-role-only", snapshotOnly: "the AWS fake answers every question the snapshot leaves out (implicitDeny); only a snapshot can leave one unknown", fires: 1, in: class, facts: base + handWrittenPassRoleOnly},
		// Hand-written: every question of the table for the class, all allowed but L1.
		{name: "hand-written-table", fires: 1, in: class, facts: base + handWrittenTable},

		// Stays quiet.
		{name: "everything-allowed", in: pooled, facts: simulated(t, pooled, "", base)},
		{name: "everything-allowed-two-pools", in: twoPools, facts: simulated(t, twoPools, "", base)},
		{name: "hand-written-table-allowed", in: class, facts: base + strings.Replace(handWrittenTable, "decision: implicitDeny", "decision: allowed", 1)},
		{name: "runtime-row-denied", in: pooled, facts: simulated(t, pooled, "", base, denied("iam:ListInstanceProfiles", ""))},

		// Not evaluated.
		{name: "no-controller-role", in: pooled, facts: clusterFacts() + "simulations: []\n", notEvaluated: "not in the facts snapshot: karpenterController"},
		{name: "cross-account-role", in: pooled, facts: controllerFacts(nil, "source: podIdentity", "targetRoleArn: arn:aws:iam::444455556666:role/KarpenterController") + "simulations: []\n",
			notEvaluated: "cross-account role: not simulable"},
		{name: "no-simulations", in: pooled, facts: base, notEvaluated: "not in the facts snapshot: simulations"},
		{name: "one-entry-missing", snapshotOnly: "the AWS fake answers every question the snapshot leaves out (implicitDeny); only a snapshot can leave one unknown", in: pooled, facts: simulated(t, pooled, "", base, unanswered("ec2:RunInstances", "snapshot/*")),
			notEvaluated: "no simulation for L7 (not in the facts snapshot)"},
		{name: "node-role-unknown", in: pooled, facts: simulated(t, pooled, "", controllerFacts([]factsOpt{without("roles")})),
			notEvaluated: "no simulation for L1 (not in the facts snapshot: roles)"},
		{name: "no-cluster", in: pooled, facts: controllerFacts([]factsOpt{noCluster()}) + "simulations: []\n", notEvaluated: "not in the facts snapshot: cluster"},
		{name: "no-facts", in: pooled, notEvaluated: "no facts: karpenterController, simulations"},
	})
}

// handWrittenPassRoleOnly answers L1 alone, as facts export would write it.
const handWrittenPassRoleOnly = `simulations:
  - principal: arn:aws:iam::111122223333:role/KarpenterController-prod-eks
    action: iam:PassRole
    resource: arn:aws:iam::111122223333:role/KarpenterNodeRole-prod-eks
    context: {iam:PassedToService: [ec2.amazonaws.com]}
    decision: implicitDeny
    missingContextValues: []
`

// handWrittenTable answers every question of the controller table for EC2NodeClass "default" (eksSpec:
// alias al2023@latest on Kubernetes 1.33, spec.role, two private subnets, the node group) when no
// NodePool references it, written from the table alone: L1 is denied, the rest allowed.
const handWrittenTable = `simulations:
  - principal: &ctrl arn:aws:iam::111122223333:role/KarpenterController-prod-eks
    action: iam:PassRole
    resource: arn:aws:iam::111122223333:role/KarpenterNodeRole-prod-eks
    context: {iam:PassedToService: [ec2.amazonaws.com]}
    decision: implicitDeny
  # L2, L3: launch templates, with req(T) where T has karpenter.sh/nodepool "".
  - principal: *ctrl
    action: ec2:CreateLaunchTemplate
    resource: "arn:aws:ec2:us-east-1:111122223333:launch-template/*"
    context: &req
      aws:RequestTag/kubernetes.io/cluster/prod-eks: [owned]
      aws:RequestTag/eks:eks-cluster-name: [prod-eks]
      aws:RequestTag/karpenter.sh/nodepool: [""]
      aws:RequestTag/karpenter.k8s.aws/ec2nodeclass: [default]
      aws:TagKeys: [kubernetes.io/cluster/prod-eks, eks:eks-cluster-name, karpenter.sh/nodepool, karpenter.k8s.aws/ec2nodeclass]
      aws:RequestedRegion: [us-east-1]
    decision: allowed
  - principal: *ctrl
    action: ec2:CreateTags
    resource: "arn:aws:ec2:us-east-1:111122223333:launch-template/*"
    context:
      aws:RequestTag/kubernetes.io/cluster/prod-eks: [owned]
      aws:RequestTag/eks:eks-cluster-name: [prod-eks]
      aws:RequestTag/karpenter.sh/nodepool: [""]
      aws:RequestTag/karpenter.k8s.aws/ec2nodeclass: [default]
      aws:TagKeys: [kubernetes.io/cluster/prod-eks, eks:eks-cluster-name, karpenter.sh/nodepool, karpenter.k8s.aws/ec2nodeclass]
      aws:RequestedRegion: [us-east-1]
      ec2:CreateAction: [CreateLaunchTemplate]
    decision: allowed
  # L4: CreateFleet on what it creates, RunInstances too but not on the fleet (no pool: no spot).
  - {principal: *ctrl, action: ec2:CreateFleet, resource: "arn:aws:ec2:us-east-1:111122223333:fleet/*", context: *req, decision: allowed}
  - {principal: *ctrl, action: ec2:CreateFleet, resource: "arn:aws:ec2:us-east-1:111122223333:instance/*", context: *req, decision: allowed}
  - {principal: *ctrl, action: ec2:CreateFleet, resource: "arn:aws:ec2:us-east-1:111122223333:volume/*", context: *req, decision: allowed}
  - {principal: *ctrl, action: ec2:CreateFleet, resource: "arn:aws:ec2:us-east-1:111122223333:network-interface/*", context: *req, decision: allowed}
  - {principal: *ctrl, action: ec2:RunInstances, resource: "arn:aws:ec2:us-east-1:111122223333:instance/*", context: *req, decision: allowed}
  - {principal: *ctrl, action: ec2:RunInstances, resource: "arn:aws:ec2:us-east-1:111122223333:volume/*", context: *req, decision: allowed}
  - {principal: *ctrl, action: ec2:RunInstances, resource: "arn:aws:ec2:us-east-1:111122223333:network-interface/*", context: *req, decision: allowed}
  # L5: tagging on creation.
  - principal: *ctrl
    action: ec2:CreateTags
    resource: "arn:aws:ec2:us-east-1:111122223333:fleet/*"
    context: &tagFleet
      aws:RequestTag/kubernetes.io/cluster/prod-eks: [owned]
      aws:RequestTag/eks:eks-cluster-name: [prod-eks]
      aws:RequestTag/karpenter.sh/nodepool: [""]
      aws:RequestTag/karpenter.k8s.aws/ec2nodeclass: [default]
      aws:TagKeys: [kubernetes.io/cluster/prod-eks, eks:eks-cluster-name, karpenter.sh/nodepool, karpenter.k8s.aws/ec2nodeclass]
      aws:RequestedRegion: [us-east-1]
      ec2:CreateAction: [CreateFleet]
    decision: allowed
  - {principal: *ctrl, action: ec2:CreateTags, resource: "arn:aws:ec2:us-east-1:111122223333:instance/*", context: *tagFleet, decision: allowed}
  - {principal: *ctrl, action: ec2:CreateTags, resource: "arn:aws:ec2:us-east-1:111122223333:volume/*", context: *tagFleet, decision: allowed}
  - {principal: *ctrl, action: ec2:CreateTags, resource: "arn:aws:ec2:us-east-1:111122223333:network-interface/*", context: *tagFleet, decision: allowed}
  # L6: launching from the launch templates, res(T).
  - principal: *ctrl
    action: ec2:CreateFleet
    resource: "arn:aws:ec2:us-east-1:111122223333:launch-template/*"
    context: &res
      aws:ResourceTag/kubernetes.io/cluster/prod-eks: [owned]
      aws:ResourceTag/eks:eks-cluster-name: [prod-eks]
      aws:ResourceTag/karpenter.sh/nodepool: [""]
      aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass: [default]
      aws:RequestedRegion: [us-east-1]
    decision: allowed
  - {principal: *ctrl, action: ec2:RunInstances, resource: "arn:aws:ec2:us-east-1:111122223333:launch-template/*", context: *res, decision: allowed}
  # L7: subnets, the security group, both images of the alias, snapshots.
  - {principal: *ctrl, action: ec2:CreateFleet, resource: "arn:aws:ec2:us-east-1:111122223333:subnet/subnet-0a1b2c3d4e5f60001", context: &region {aws:RequestedRegion: [us-east-1]}, decision: allowed}
  - {principal: *ctrl, action: ec2:CreateFleet, resource: "arn:aws:ec2:us-east-1:111122223333:subnet/subnet-0a1b2c3d4e5f60002", context: *region, decision: allowed}
  - {principal: *ctrl, action: ec2:CreateFleet, resource: "arn:aws:ec2:us-east-1:111122223333:security-group/sg-0a1b2c3d4e5f60002", context: *region, decision: allowed}
  - {principal: *ctrl, action: ec2:CreateFleet, resource: "arn:aws:ec2:us-east-1::image/ami-0aa11bb22cc33dd44", context: *region, decision: allowed}
  - {principal: *ctrl, action: ec2:CreateFleet, resource: "arn:aws:ec2:us-east-1::image/ami-0aa11bb22cc33dd55", context: *region, decision: allowed}
  - {principal: *ctrl, action: ec2:CreateFleet, resource: "arn:aws:ec2:us-east-1::snapshot/*", context: *region, decision: allowed}
  - {principal: *ctrl, action: ec2:RunInstances, resource: "arn:aws:ec2:us-east-1:111122223333:subnet/subnet-0a1b2c3d4e5f60001", context: *region, decision: allowed}
  - {principal: *ctrl, action: ec2:RunInstances, resource: "arn:aws:ec2:us-east-1:111122223333:subnet/subnet-0a1b2c3d4e5f60002", context: *region, decision: allowed}
  - {principal: *ctrl, action: ec2:RunInstances, resource: "arn:aws:ec2:us-east-1:111122223333:security-group/sg-0a1b2c3d4e5f60002", context: *region, decision: allowed}
  - {principal: *ctrl, action: ec2:RunInstances, resource: "arn:aws:ec2:us-east-1::image/ami-0aa11bb22cc33dd44", context: *region, decision: allowed}
  - {principal: *ctrl, action: ec2:RunInstances, resource: "arn:aws:ec2:us-east-1::image/ami-0aa11bb22cc33dd55", context: *region, decision: allowed}
  - {principal: *ctrl, action: ec2:RunInstances, resource: "arn:aws:ec2:us-east-1::snapshot/*", context: *region, decision: allowed}
  # L8: discovery.
  - {principal: *ctrl, action: ec2:DescribeImages, resource: "*", context: *region, decision: allowed}
  - {principal: *ctrl, action: ec2:DescribeSubnets, resource: "*", context: *region, decision: allowed}
  - {principal: *ctrl, action: ec2:DescribeSecurityGroups, resource: "*", context: *region, decision: allowed}
  - {principal: *ctrl, action: ec2:DescribeInstanceTypes, resource: "*", context: *region, decision: allowed}
  - {principal: *ctrl, action: ec2:DescribeInstanceTypeOfferings, resource: "*", context: *region, decision: allowed}
  - {principal: *ctrl, action: ec2:DescribeLaunchTemplates, resource: "*", context: *region, decision: allowed}
  # L9: the alias's parameters, no context.
  - {principal: *ctrl, action: ssm:GetParameter, resource: "arn:aws:ssm:us-east-1::parameter/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/recommended/image_id", decision: allowed}
  - {principal: *ctrl, action: ssm:GetParameter, resource: "arn:aws:ssm:us-east-1::parameter/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/arm64/standard/recommended/image_id", decision: allowed}
  # L10, L11: the instance profile for spec.role, with T_ip.
  - principal: *ctrl
    action: iam:GetInstanceProfile
    resource: "arn:aws:iam::111122223333:instance-profile/*"
    context: &reqIP
      aws:RequestTag/kubernetes.io/cluster/prod-eks: [owned]
      aws:RequestTag/eks:eks-cluster-name: [prod-eks]
      aws:RequestTag/karpenter.k8s.aws/ec2nodeclass: [default]
      aws:RequestTag/topology.kubernetes.io/region: [us-east-1]
      aws:TagKeys: [kubernetes.io/cluster/prod-eks, eks:eks-cluster-name, karpenter.k8s.aws/ec2nodeclass, topology.kubernetes.io/region]
    decision: allowed
  - {principal: *ctrl, action: iam:CreateInstanceProfile, resource: "arn:aws:iam::111122223333:instance-profile/*", context: *reqIP, decision: allowed}
  - principal: *ctrl
    action: iam:TagInstanceProfile
    resource: "arn:aws:iam::111122223333:instance-profile/*"
    context:
      aws:RequestTag/kubernetes.io/cluster/prod-eks: [owned]
      aws:RequestTag/eks:eks-cluster-name: [prod-eks]
      aws:RequestTag/karpenter.k8s.aws/ec2nodeclass: [default]
      aws:RequestTag/topology.kubernetes.io/region: [us-east-1]
      aws:TagKeys: [kubernetes.io/cluster/prod-eks, eks:eks-cluster-name, karpenter.k8s.aws/ec2nodeclass, topology.kubernetes.io/region]
      aws:ResourceTag/kubernetes.io/cluster/prod-eks: [owned]
      aws:ResourceTag/eks:eks-cluster-name: [prod-eks]
      aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass: [default]
      aws:ResourceTag/topology.kubernetes.io/region: [us-east-1]
    decision: allowed
  - principal: *ctrl
    action: iam:AddRoleToInstanceProfile
    resource: "arn:aws:iam::111122223333:instance-profile/*"
    context: &resIP
      aws:ResourceTag/kubernetes.io/cluster/prod-eks: [owned]
      aws:ResourceTag/eks:eks-cluster-name: [prod-eks]
      aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass: [default]
      aws:ResourceTag/topology.kubernetes.io/region: [us-east-1]
    decision: allowed
  # L12: AL2023 reads the service CIDR.
  - {principal: *ctrl, action: eks:DescribeCluster, resource: "arn:aws:eks:us-east-1:111122223333:cluster/prod-eks", decision: allowed}
  # D1–D5 (controller-runtime-permissions).
  - {principal: *ctrl, action: iam:ListInstanceProfiles, resource: "*", decision: allowed}
  - {principal: *ctrl, action: iam:RemoveRoleFromInstanceProfile, resource: "arn:aws:iam::111122223333:instance-profile/*", context: *resIP, decision: allowed}
  - {principal: *ctrl, action: iam:DeleteInstanceProfile, resource: "arn:aws:iam::111122223333:instance-profile/*", context: *resIP, decision: allowed}
  - {principal: *ctrl, action: ec2:TerminateInstances, resource: "arn:aws:ec2:us-east-1:111122223333:instance/*", context: *res, decision: allowed}
  - {principal: *ctrl, action: ec2:TerminateInstances, resource: "arn:aws:ec2:us-east-1:111122223333:launch-template/*", context: *res, decision: allowed}
  - {principal: *ctrl, action: ec2:DeleteLaunchTemplate, resource: "arn:aws:ec2:us-east-1:111122223333:instance/*", context: *res, decision: allowed}
  - {principal: *ctrl, action: ec2:DeleteLaunchTemplate, resource: "arn:aws:ec2:us-east-1:111122223333:launch-template/*", context: *res, decision: allowed}
  - {principal: *ctrl, action: ec2:DescribeInstances, resource: "*", context: *region, decision: allowed}
  - {principal: *ctrl, action: ec2:DescribeInstanceStatus, resource: "*", context: *region, decision: allowed}
  - {principal: *ctrl, action: pricing:GetProducts, resource: "*", decision: allowed}
  - principal: *ctrl
    action: ec2:CreateTags
    resource: "arn:aws:ec2:us-east-1:111122223333:instance/*"
    context:
      aws:ResourceTag/kubernetes.io/cluster/prod-eks: [owned]
      aws:ResourceTag/eks:eks-cluster-name: [prod-eks]
      aws:ResourceTag/karpenter.sh/nodepool: [""]
      aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass: [default]
      aws:RequestedRegion: [us-east-1]
      aws:TagKeys: [eks:eks-cluster-name, karpenter.sh/nodeclaim, Name]
    decision: allowed
`
