package rules_test

import (
	"strings"
	"testing"
)

func TestAMISelectorMissingOwner(t *testing.T) {
	withTerms := func(terms string) string {
		return strings.Replace(baseSpec, "amiSelectorTerms:\n  - alias: al2023@v20251112\n", "amiFamily: AL2023\namiSelectorTerms:\n"+terms, 1)
	}
	testRule(t, "ami-selector-missing-owner", []ruleCase{
		{name: "alias", in: nodeClass("alias", baseSpec)},
		{name: "owner-set", in: nodeClass("owned", withTerms("  - name: amazon-eks-node-al2023-*\n    owner: amazon\n"))},
		{name: "tags-only", in: nodeClass("tags", withTerms("  - tags:\n      team: platform\n"))},
		{name: "eks-pattern", fires: 1, in: nodeClass("eks", withTerms("  - name: \"amazon-eks-node-al2023-x86_64-standard-1.32-*\"   # EKS image\n"))},
		{name: "bottlerocket-and-flow", fires: 2, in: nodeClass("br", withTerms("  - {name: bottlerocket-aws-k8s-1.32-x86_64-*}\n  - name: amazon-eks-arm64-node-1.29-*\n    tags:\n      stage: prod\n"))},
		// A leading * hides the EKS name: owner self would select nothing; amazon is suggested, not added.
		{name: "eks-pattern-leading-wildcard", fires: 1, in: nodeClass("eks-star", withTerms("  - name: \"*amazon-eks-node-al2023*\"\n"))},
		{name: "own-image-no-default", fires: 1, in: nodeClass("own", withTerms("  - name: platform-team-base-*\n"))},
		{name: "own-image-default-owner", fires: 1, cfg: "apiVersion: karpenter-guard.io/v1alpha1\nkind: GuardConfig\namiOwners:\n  defaultOwner: \"111122223333\"\n",
			in: nodeClass("own-default", withTerms("  - name: platform-team-base-*\n"))},
	})
}
