package rules_test

import "testing"

func TestAL2023HybridAuth(t *testing.T) {
	byName := withAMI("amiFamily: AL2023\namiSelectorTerms:\n  - name: amazon-eks-node-al2023-x86_64-standard-1.33-*\n    owner: amazon\n")
	testRule(t, "al2023-hybrid-auth", []ruleCase{
		{name: "entry-and-mapping", in: nodeClass("default", eksSpec), facts: clusterFacts()},
		{name: "hybrid-entry-only", fires: 1, in: nodeClass("default", eksSpec), facts: clusterFacts(noConfigMap())},
		{name: "hybrid-entry-mapping-without-bootstrappers", fires: 1, in: nodeClass("default", eksSpec),
			facts: clusterFacts(withAWSAuth(mapping(nodeRoleARN, "[system:nodes]")))},
		{name: "api-entry", fires: 1, in: nodeClass("default", eksSpec), facts: clusterFacts(mode("API"))},
		{name: "api-amifamily-by-name", fires: 1, in: nodeClass("by-name", byName), facts: clusterFacts(mode("API"))},
		{name: "config-map", in: nodeClass("default", eksSpec), facts: clusterFacts(mode("CONFIG_MAP"))},
		{name: "bottlerocket", in: nodeClass("bottlerocket", withAMI("amiSelectorTerms:\n  - alias: bottlerocket@latest\n")), facts: clusterFacts(mode("API"))},
		{name: "windows", in: nodeClass("windows", windowsSpec(winRole)), facts: clusterFacts(mode("API"))},
		{name: "standard-entry", in: nodeClass("default", eksSpec), facts: clusterFacts(mode("API"), entries(entry(nodeRoleARN, "STANDARD", "2025-06-01T10:00:00Z")))},
		{name: "not-covered", in: nodeClass("legacy", withRole("role: "+legacyRole+"\n")), facts: clusterFacts(mode("API"))},
		{name: "input-aws-auth-maps", in: docs(nodeClass("default", eksSpec), awsAuth("mapRoles: |\n"+indent(mapping(nodeRoleARN, nodeGroups), "  "))),
			facts: clusterFacts(without("awsAuth"))},
		{name: "aws-auth-unknown", in: nodeClass("default", eksSpec), facts: clusterFacts(without("awsAuth")), notEvaluated: "not in the facts snapshot: awsAuth"},
		{name: "entries-unknown", in: nodeClass("default", eksSpec), facts: clusterFacts(without("accessEntries")), notEvaluated: "accessEntries"},
	})
}
