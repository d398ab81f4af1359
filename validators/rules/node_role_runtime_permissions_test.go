package rules_test

import (
	"testing"

	"github.com/karpenter-guard/karpenter-guard/facts"
)

func TestNodeRoleRuntimePermissions(t *testing.T) {
	onPodIdentity := cni("true", facts.CredentialsPodIdentity)
	testRule(t, "node-role-runtime-permissions", []ruleCase{
		{name: "allowed", in: nodeClass("default", eksSpec), facts: nodeRoleFacts(nil)},
		{name: "allowed-bottlerocket", in: nodeClass("bottlerocket", withAMI("amiSelectorTerms:\n  - alias: bottlerocket@latest\n")), facts: nodeRoleFacts(nil)},
		// W1, W2: pulling images from ECR.
		{name: "ecr-token-denied", fires: 1, in: nodeClass("default", eksSpec), facts: nodeRoleFacts(nil, deny("ecr:GetAuthorizationToken"))},
		{name: "cni-image-layer-denied", fires: 1, in: nodeClass("default", eksSpec), facts: nodeRoleFacts(nil, deny("ecr:GetDownloadUrlForLayer"))},
		// W3: aws-node on the node role's credentials manages network interfaces.
		{name: "tag-interfaces-denied", fires: 1, in: nodeClass("default", eksSpec), facts: nodeRoleFacts(nil, deny("ec2:CreateTags"))},
		{name: "interfaces-denied-cni-on-irsa", in: nodeClass("default", eksSpec),
			facts: identityFacts(nil, cni("true", facts.CredentialsIRSA), simulations(nodeRoleARN, deny("ec2:CreateNetworkInterface")))},
		// W4: Pod Identity associations other than aws-node's.
		{name: "pod-identity-denied", fires: 1, in: nodeClass("default", eksSpec), facts: nodeRoleFacts(nil, deny("eks-auth:AssumeRoleForPodIdentity"))},
		{name: "pod-identity-denied-no-associations", in: nodeClass("default", eksSpec),
			facts: nodeRoleFacts([]factsOpt{podIdentity("0")}, deny("eks-auth:AssumeRoleForPodIdentity"))},
		{name: "pod-identity-denied-cni-on-pod-identity", in: nodeClass("default", eksSpec), // node-role-join-permissions reports it
			facts: identityFacts(nil, onPodIdentity, simulations(nodeRoleARN, deny("eks-auth:AssumeRoleForPodIdentity")))},
		{name: "three-rows-denied", fires: 3, in: nodeClass("default", eksSpec),
			facts: nodeRoleFacts(nil, deny("ecr:GetAuthorizationToken"), deny("ec2:AssignPrivateIpAddresses"), explicitDeny("eks-auth:AssumeRoleForPodIdentity"))},
		// Context keys the question did not carry.
		{name: "missing-context", fires: 1, in: nodeClass("default", eksSpec),
			facts: nodeRoleFacts(nil, denyMissing("ecr:BatchGetImage", "aws:SourceVpce"))},
		// Partial answers.
		{name: "denied-and-unanswered", snapshotOnly: unansweredLive, fires: 1, in: nodeClass("default", eksSpec),
			facts: nodeRoleFacts(nil, deny("ecr:GetAuthorizationToken"), unknownSim("ecr:BatchGetImage"))},
		{name: "denied-and-associations-unknown", snapshotOnly: associationsLive, fires: 1, in: nodeClass("default", eksSpec),
			facts: nodeRoleFacts([]factsOpt{podIdentity("")}, deny("ecr:GetAuthorizationToken"))},
		// Unknown: not evaluated, never passed.
		{name: "unanswered", snapshotOnly: unansweredLive, in: nodeClass("default", eksSpec), facts: nodeRoleFacts(nil, unknownSim("ec2:AttachNetworkInterface")),
			notEvaluated: "no simulation for W3 (not in the facts snapshot)"},
		{name: "associations-unknown", snapshotOnly: associationsLive, in: nodeClass("default", eksSpec), facts: nodeRoleFacts([]factsOpt{podIdentity("")}),
			notEvaluated: "cannot tell whether the node role needs W4 (the cluster's Pod Identity associations are not known)"},
		{name: "associations-unknown-cni-on-pod-identity", in: nodeClass("default", eksSpec),
			facts: identityFacts([]factsOpt{podIdentity("")}, onPodIdentity, simulations(nodeRoleARN))},
		{name: "cni-presence-unknown", snapshotOnly: cniKnownLive, in: nodeClass("default", eksSpec), facts: identityFacts(nil, cni("", ""), simulations(nodeRoleARN)),
			notEvaluated: "W3, W4 (whether aws-node runs is not known)"},
		{name: "simulations-unknown", in: nodeClass("default", eksSpec), facts: identityFacts(nil, cni("true", facts.CredentialsNodeRole), ""), notEvaluated: "not in the facts snapshot: simulations"},
		{name: "cni-unknown", in: nodeClass("default", eksSpec), facts: identityFacts(nil, "", simulations(nodeRoleARN)), notEvaluated: "not in the facts snapshot: vpcCNI"},
		{name: "no-facts", in: nodeClass("default", eksSpec), notEvaluated: "no facts"},
	})
}
