package rules_test

import (
	"testing"

	"github.com/karpenter-guard/karpenter-guard/facts"
)

func TestControllerRuntimePermissions(t *testing.T) {
	class := nodeClass("default", eksSpec)
	pooled := docs(class, nodePool("default", "default", ""))
	spotPool := docs(class, capacityPool("any", "")) // no capacity-type requirement: spot allowed
	byProfile := nodeClass("default", withRole("instanceProfile: "+nodeProfile+"\n"))
	base := controllerFacts(nil)
	testRule(t, "controller-runtime-permissions", []ruleCase{
		// Fires, at warn.
		{name: "list-instance-profiles-denied", fires: 1, in: pooled, facts: simulated(t, pooled, "", base, denied("iam:ListInstanceProfiles", ""))},
		{name: "instance-profile-deletion-denied", fires: 1, in: pooled, facts: simulated(t, pooled, "", base, denied("iam:DeleteInstanceProfile", ""))},
		{name: "termination-denied", fires: 1, in: pooled, facts: simulated(t, pooled, "", base, denied("ec2:TerminateInstances", "instance/*"))},
		{name: "spot-price-history-denied", fires: 1, in: spotPool, facts: simulated(t, spotPool, "", base, denied("ec2:DescribeSpotPriceHistory", ""))},
		{name: "pricing-denied", fires: 1, in: pooled, facts: simulated(t, pooled, "", base, denied("pricing:GetProducts", ""))},
		{name: "tagging-controller-denied", fires: 1, in: pooled, facts: simulated(t, pooled, "", base,
			answer{action: "ec2:CreateTags", resource: "instance/*", decision: facts.DecisionExplicitDeny, pool: "default"})},
		{name: "interruption-queue-denied", fires: 1, cfg: queueConfig, in: pooled, facts: simulated(t, pooled, queueConfig, base, denied("sqs:ReceiveMessage", ":prod-eks"))},
		{name: "list-denied-with-missing-context", fires: 1, in: pooled, facts: simulated(t, pooled, "", base,
			answer{action: "iam:ListInstanceProfiles", decision: facts.DecisionImplicitDeny, missing: []string{"aws:PrincipalTag/team"}})},
		{name: "list-denied-while-pricing-unknown", snapshotOnly: "the AWS fake answers every question the snapshot leaves out (implicitDeny); only a snapshot can leave one unknown", fires: 1, in: pooled, facts: simulated(t, pooled, "", base, denied("iam:ListInstanceProfiles", ""), unanswered("pricing:GetProducts", ""))},
		{name: "hand-written-list-only", snapshotOnly: "the AWS fake answers every question the snapshot leaves out (implicitDeny); only a snapshot can leave one unknown", fires: 1, in: class, facts: base + handWrittenListOnly},

		// Stays quiet.
		{name: "everything-allowed", in: pooled, facts: simulated(t, pooled, "", base)},
		{name: "everything-allowed-with-queue", cfg: queueConfig, in: pooled, facts: simulated(t, pooled, queueConfig, base)},
		{name: "launch-row-denied", in: pooled, facts: simulated(t, pooled, "", base, denied("iam:PassRole", ""))},
		{name: "profile-class-asks-no-profile-actions", in: byProfile, facts: simulated(t, byProfile, "", base)},
		{name: "hand-written-table-launch-row-denied", in: class, facts: base + handWrittenTable},

		// Not evaluated.
		{name: "no-controller-role", in: pooled, facts: clusterFacts() + "simulations: []\n", notEvaluated: "not in the facts snapshot: karpenterController"},
		{name: "cross-account-role", in: pooled, facts: controllerFacts(nil, "source: podIdentity", "targetRoleArn: arn:aws:iam::444455556666:role/KarpenterController") + "simulations: []\n",
			notEvaluated: "cross-account role: not simulable"},
		{name: "no-simulations", in: pooled, facts: base, notEvaluated: "not in the facts snapshot: simulations"},
		{name: "one-entry-missing", snapshotOnly: "the AWS fake answers every question the snapshot leaves out (implicitDeny); only a snapshot can leave one unknown", in: pooled, facts: simulated(t, pooled, "", base, unanswered("iam:ListInstanceProfiles", "")),
			notEvaluated: "no simulation for D1 (not in the facts snapshot)"},
		{name: "queue-not-answered", snapshotOnly: "the AWS fake answers every question the snapshot leaves out (implicitDeny); only a snapshot can leave one unknown", cfg: queueConfig, in: pooled, facts: simulated(t, pooled, "", base), notEvaluated: "no simulation for D6"},
		{name: "no-facts", in: pooled, notEvaluated: "no facts: karpenterController, simulations"},
	})
}

// handWrittenListOnly answers D1 alone: denied.
const handWrittenListOnly = `simulations:
  - principal: arn:aws:iam::111122223333:role/KarpenterController-prod-eks
    action: iam:ListInstanceProfiles
    resource: "*"
    decision: implicitDeny
`
