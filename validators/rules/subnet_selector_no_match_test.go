package rules_test

import "testing"

func TestSubnetSelectorNoMatch(t *testing.T) {
	testRule(t, "subnet-selector-no-match", []ruleCase{
		{name: "discovery-tag", in: nodeClass("default", eksSpec), facts: clusterFacts()},
		{name: "ids", in: nodeClass("by-id", subnetSel("  - id: "+privateA+"\n  - id: "+privateB+"\n")), facts: clusterFacts()},
		{name: "tag-wildcard", in: nodeClass("wildcard", subnetSel("  - tags:\n      Name: prod-eks-private-*\n")), facts: clusterFacts()},
		{name: "tag-key-present", in: nodeClass("key", subnetSel("  - tags:\n      karpenter.sh/discovery: \"*\"\n")), facts: clusterFacts()},
		{name: "one-term-matches", in: nodeClass("two-terms", subnetSel("  - tags:\n      karpenter.sh/discovery: prod\n  - id: "+privateA+"\n")), facts: clusterFacts()},
		{name: "tag-typo", fires: 1, in: nodeClass("typo", subnetSel("  - tags:\n      karpenter.sh/discovery: prod-eks-cluster\n")), facts: clusterFacts()},
		{name: "tags-anded", fires: 1, in: nodeClass("anded", subnetSel("  - tags:\n      karpenter.sh/discovery: prod-eks\n      kubernetes.io/role/elb: \"1\"\n")), facts: clusterFacts()},
		{name: "id-missing", fires: 1, in: nodeClass("by-id", subnetSel("  - id: subnet-0deadbeef0000001\n  - id: subnet-0deadbeef0000002\n")), facts: clusterFacts()},
		{name: "no-subnets", fires: 1, in: nodeClass("default", eksSpec), facts: clusterFacts(subnets())},
		{name: "subnets-unknown", in: nodeClass("default", eksSpec), facts: clusterFacts(without("subnets")), notEvaluated: "not in the facts snapshot: subnets"},
		{name: "no-facts", in: nodeClass("default", eksSpec), notEvaluated: "no facts: subnets"},
	})
}
