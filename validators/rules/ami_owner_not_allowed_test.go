package rules_test

import "testing"

func TestAMIOwnerNotAllowed(t *testing.T) {
	amazonOnly := "apiVersion: karpenter-guard.io/v1alpha1\nkind: GuardConfig\namiOwners:\n  allowed: [amazon]\n"
	amazonAndSelf := "apiVersion: karpenter-guard.io/v1alpha1\nkind: GuardConfig\namiOwners:\n  allowed: [amazon, self]\n"
	byEKSAccount := "apiVersion: karpenter-guard.io/v1alpha1\nkind: GuardConfig\namiOwners:\n  allowed: [\"602401143452\"]\n"
	eksName := amiTerms("amiFamily: AL2023\namiSelectorTerms:\n  - name: amazon-eks-node-al2023-x86_64-standard-1.33-*\n")
	testRule(t, "ami-owner-not-allowed", []ruleCase{
		{name: "alias", cfg: amazonOnly, in: nodeClass("default", eksSpec), facts: clusterFacts()},
		{name: "windows-alias", cfg: amazonOnly, in: nodeClass("windows", windowsSpec(winRole)), facts: clusterFacts()},
		{name: "name-owner-amazon", cfg: amazonOnly, in: nodeClass("by-name", amiTerms("amiFamily: AL2023\namiSelectorTerms:\n  - name: amazon-eks-node-al2023-x86_64-standard-1.33-*\n    owner: amazon\n")), facts: clusterFacts()},
		{name: "look-alike-self-allowed", cfg: amazonAndSelf, in: nodeClass("by-name", eksName), facts: clusterFacts()},
		{name: "account-id-allowed", cfg: byEKSAccount, in: nodeClass("default", eksSpec), facts: clusterFacts()},
		{name: "allowlist-empty-rule-off", in: nodeClass("vendor", amiTerms("amiFamily: AL2023\namiSelectorTerms:\n  - tags:\n      vendor: cis\n")), facts: clusterFacts()},
		{name: "look-alike-picked", fires: 1, cfg: amazonOnly, in: nodeClass("by-name", eksName), facts: clusterFacts()},
		{name: "vendor-image", fires: 1, cfg: amazonAndSelf, in: nodeClass("vendor", amiTerms("amiFamily: AL2023\namiSelectorTerms:\n  - tags:\n      vendor: cis\n")), facts: clusterFacts()},
		{name: "windows-not-from-eks-account", fires: 1, cfg: byEKSAccount, in: nodeClass("windows", windowsSpec(winRole)), facts: clusterFacts()},
		{name: "images-unknown", cfg: amazonOnly, in: nodeClass("by-name", eksName), facts: clusterFacts(without("images")), notEvaluated: "not in the facts snapshot: images"},
		{name: "alias-ssm-unknown", cfg: amazonOnly, in: nodeClass("default", eksSpec), facts: clusterFacts(without("ssmParameters")), notEvaluated: "ssmParameters"},
		{name: "self-allowed-account-unknown", cfg: amazonAndSelf, in: nodeClass("team", amiTerms("amiFamily: AL2023\namiSelectorTerms:\n  - tags:\n      team: platform\n    owner: \"111122223333\"\n")),
			facts: clusterFacts(clusterField("accountID", "")), notEvaluated: "cluster.accountID"},
		{name: "no-facts", cfg: amazonOnly, in: nodeClass("default", eksSpec), notEvaluated: "no facts: images"},
	})
}
