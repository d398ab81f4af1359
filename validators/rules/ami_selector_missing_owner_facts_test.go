package rules_test

import "testing"

// TestAMISelectorMissingOwnerWithFacts: with image facts the fix adds the single owner the term
// resolves to, and reports instead of guessing when the images have several owners (an image of the
// account named like a public EKS AMI). Without a match or without image facts, the static fix applies.
// It denies only when the term picks images of several owners, or an image named like Amazon's EKS AMIs
// that Amazon did not publish: otherwise the term works today, and the finding is a warning.
func TestAMISelectorMissingOwnerWithFacts(t *testing.T) {
	term := func(lines string) string { return amiTerms("amiFamily: AL2023\namiSelectorTerms:\n" + lines) }
	testRuleNamed(t, "ami-selector-missing-owner", "ami-selector-missing-owner-facts", []ruleCase{
		{name: "owner-set", in: nodeClass("owned", term("  - name: amazon-eks-node-al2023-x86_64-standard-1.33-*\n    owner: amazon\n")), facts: clusterFacts()},
		{name: "alias", in: nodeClass("default", eksSpec), facts: clusterFacts()},
		{name: "amazon-images-only", fires: 1, in: nodeClass("eks", term("  - name: amazon-eks-node-al2023-*-standard-1.33-v20251112\n")), facts: clusterFacts()},
		{name: "own-images-only", fires: 1, in: nodeClass("team", term("  - name: platform-team-base-*\n")), facts: clusterFacts()},
		{name: "own-images-name-and-tags", fires: 1, in: nodeClass("team", term("  - name: platform-team-base-*\n    tags:\n      team: platform\n")), facts: clusterFacts()},
		{name: "look-alike-several-owners", fires: 1, in: nodeClass("eks", term("  - name: amazon-eks-node-al2023-x86_64-standard-1.33-*\n")), facts: clusterFacts()},
		// Only this account's image named like Amazon's: the stray image is what the nodes boot. Deny.
		{name: "look-alike-only", fires: 1, in: nodeClass("eks", term("  - name: amazon-eks-node-al2023-x86_64-standard-1.33-v20251201\n")), facts: clusterFacts()},
		{name: "several-terms", fires: 2, in: nodeClass("mixed", term("  - name: amazon-eks-node-al2023-x86_64-standard-1.33-*\n  - name: bottlerocket-aws-k8s-1.33-*\n")), facts: clusterFacts()},
		// Nothing matches (or only a pending image): the static fix.
		{name: "no-match-eks-pattern", fires: 1, in: nodeClass("eks", term("  - name: amazon-eks-node-al2023-x86_64-standard-1.34-*\n")), facts: clusterFacts()},
		{name: "only-pending-image", fires: 1, in: nodeClass("team", term("  - name: platform-team-base-2025.12\n")), facts: clusterFacts()},
		{name: "images-unknown-eks-pattern", fires: 1, in: nodeClass("eks", term("  - name: amazon-eks-node-al2023-x86_64-standard-1.33-*\n")), facts: clusterFacts(without("images"))},
		{name: "images-unknown-own-name", fires: 1, in: nodeClass("team", term("  - name: platform-team-base-*\n")), facts: clusterFacts(without("images"))},
	})
}
