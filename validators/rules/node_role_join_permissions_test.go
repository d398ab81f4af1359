package rules_test

import (
	"testing"

	"github.com/karpenter-guard/karpenter-guard/facts"
)

func TestNodeRoleJoinPermissions(t *testing.T) {
	onNode := cni("true", facts.CredentialsNodeRole)
	onPodIdentity := cni("true", facts.CredentialsPodIdentity)
	profileSpec := withRole("instanceProfile: " + nodeProfile + "\n")
	bottlerocket := withAMI("amiSelectorTerms:\n  - alias: bottlerocket@latest\n")
	testRule(t, "node-role-join-permissions", []ruleCase{
		{name: "allowed", in: nodeClass("default", eksSpec), facts: nodeRoleFacts(nil)},
		// J1: nodeadm reads the node's private DNS name.
		{name: "describe-instances-denied", fires: 1, in: nodeClass("default", eksSpec), facts: nodeRoleFacts(nil, deny("ec2:DescribeInstances"))},
		{name: "describe-instances-custom-nodeadm", fires: 1, in: nodeClass("custom", customNodeadmSpec), facts: nodeRoleFacts(nil, deny("ec2:DescribeInstances"))},
		{name: "describe-instances-instance-id-names", in: nodeClass("by-id", instanceIDSpec), facts: nodeRoleFacts(nil, deny("ec2:DescribeInstances"))},
		{name: "describe-instances-bottlerocket", in: nodeClass("bottlerocket", bottlerocket), facts: nodeRoleFacts(nil, deny("ec2:DescribeInstances"))},
		{name: "describe-instances-via-profile", fires: 1, in: nodeClass("profile", profileSpec), facts: nodeRoleFacts(nil, deny("ec2:DescribeInstances"))},
		// J2: aws-node on the node role's credentials.
		{name: "network-interfaces-explicitly-denied", fires: 1, in: nodeClass("default", eksSpec), facts: nodeRoleFacts(nil, explicitDeny("ec2:DescribeNetworkInterfaces"))},
		{name: "network-interfaces-cni-on-irsa", in: nodeClass("default", eksSpec),
			facts: identityFacts(nil, cni("true", facts.CredentialsIRSA), simulations(nodeRoleARN, deny("ec2:DescribeNetworkInterfaces")))},
		{name: "network-interfaces-other-cni", in: nodeClass("default", eksSpec),
			facts: identityFacts(nil, cni("false", ""), simulations(nodeRoleARN, deny("ec2:DescribeNetworkInterfaces")))},
		// J3: aws-node on Pod Identity.
		{name: "pod-identity-denied", fires: 1, in: nodeClass("default", eksSpec),
			facts: identityFacts(nil, onPodIdentity, simulations(nodeRoleARN, deny("eks-auth:AssumeRoleForPodIdentity")))},
		{name: "pod-identity-cni-on-node-role", in: nodeClass("default", eksSpec), facts: nodeRoleFacts(nil, deny("eks-auth:AssumeRoleForPodIdentity"))},
		{name: "two-rows-denied", fires: 2, in: nodeClass("default", eksSpec),
			facts: nodeRoleFacts(nil, deny("ec2:DescribeInstances"), deny("ec2:DescribeNetworkInterfaces"))},
		// Capped at warn: the policy needs context keys the question did not carry.
		{name: "missing-context", fires: 1, in: nodeClass("default", eksSpec),
			facts: nodeRoleFacts(nil, denyMissing("ec2:DescribeInstances", "aws:SourceVpc"))},
		// Partial answers: a denied row fires whatever else is unknown.
		{name: "denied-and-unanswered", snapshotOnly: unansweredLive, fires: 1, in: nodeClass("default", eksSpec),
			facts: nodeRoleFacts(nil, deny("ec2:DescribeInstances"), unknownSim("ec2:DescribeNetworkInterfaces"))},
		{name: "denied-and-cni-unknown", snapshotOnly: cniKnownLive, fires: 1, in: nodeClass("default", eksSpec),
			facts: identityFacts(nil, cni("", ""), simulations(nodeRoleARN, deny("ec2:DescribeInstances")))},
		// Other rules report these.
		{name: "role-missing", in: nodeClass("typo", withRole("role: KarpenterNodeRole-prod\n")), facts: nodeRoleFacts(nil, deny("ec2:DescribeInstances"))},
		// Unknown: not evaluated, never passed.
		{name: "unanswered", snapshotOnly: unansweredLive, in: nodeClass("default", eksSpec), facts: nodeRoleFacts(nil, unknownSim("ec2:DescribeNetworkInterfaces")),
			notEvaluated: "no simulation for J2 (not in the facts snapshot)"},
		{name: "no-answers", snapshotOnly: unansweredLive, in: nodeClass("default", eksSpec), facts: identityFacts(nil, onNode, "simulations: []\n"),
			notEvaluated: "no simulation for J1 (not in the facts snapshot), J2 (not in the facts snapshot)"},
		{name: "cni-presence-unknown", snapshotOnly: cniKnownLive, in: nodeClass("default", eksSpec), facts: identityFacts(nil, cni("", ""), simulations(nodeRoleARN)),
			notEvaluated: "cannot tell whether the node role needs J2, J3 (whether aws-node runs is not known)"},
		{name: "cni-credentials-unknown", snapshotOnly: cniKnownLive, in: nodeClass("default", eksSpec), facts: identityFacts(nil, cni("true", ""), simulations(nodeRoleARN)),
			notEvaluated: `aws-node's credentials "" are not known`},
		{name: "simulations-unknown", in: nodeClass("default", eksSpec), facts: identityFacts(nil, onNode, ""), notEvaluated: "not in the facts snapshot: simulations"},
		{name: "cni-unknown", in: nodeClass("default", eksSpec), facts: identityFacts(nil, "", simulations(nodeRoleARN)), notEvaluated: "not in the facts snapshot: vpcCNI"},
		{name: "roles-unknown", in: nodeClass("default", eksSpec), facts: nodeRoleFacts([]factsOpt{without("roles")}), notEvaluated: "roles"},
		{name: "profiles-unknown", in: nodeClass("profile", profileSpec), facts: nodeRoleFacts([]factsOpt{without("instanceProfiles")}), notEvaluated: "instanceProfiles"},
		{name: "cluster-unknown", in: nodeClass("default", eksSpec), facts: nodeRoleFacts([]factsOpt{noCluster()}), notEvaluated: "cluster"},
		{name: "no-facts", in: nodeClass("default", eksSpec), notEvaluated: "no facts"},
	})
}
