package rules_test

import "testing"

func TestSecurityGroupSelectorNoMatch(t *testing.T) {
	testRule(t, "security-group-selector-no-match", []ruleCase{
		{name: "discovery-tag", in: nodeClass("default", eksSpec), facts: clusterFacts()},
		{name: "name", in: nodeClass("by-name", groupSel("  - name: prod-eks-node\n")), facts: clusterFacts()},
		{name: "name-wildcard", in: nodeClass("wildcard", groupSel("  - name: eks-cluster-sg-prod-eks-*\n")), facts: clusterFacts()},
		{name: "id", in: nodeClass("by-id", groupSel("  - id: "+clusterSG+"\n")), facts: clusterFacts()},
		{name: "cluster-tag", in: nodeClass("cluster-tag", groupSel("  - tags:\n      kubernetes.io/cluster/prod-eks: owned\n")), facts: clusterFacts()},
		{name: "name-typo", fires: 1, in: nodeClass("by-name", groupSel("  - name: prod-eks-nodes\n")), facts: clusterFacts()},
		{name: "tag-of-other-cluster", fires: 1, in: nodeClass("typo", groupSel("  - tags:\n      karpenter.sh/discovery: staging-eks\n")), facts: clusterFacts()},
		{name: "name-and-tag-anded", fires: 1, in: nodeClass("anded", groupSel("  - name: prod-eks-node\n    tags:\n      aws:eks:cluster-name: prod-eks\n")), facts: clusterFacts()},
		{name: "groups-unknown", in: nodeClass("default", eksSpec), facts: clusterFacts(without("securityGroups")), notEvaluated: "not in the facts snapshot: securityGroups"},
		{name: "no-facts", in: nodeClass("default", eksSpec), notEvaluated: "no facts: securityGroups"},
	})
}
