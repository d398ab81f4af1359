package rules_test

import "testing"

func TestSelectorVPCMismatch(t *testing.T) {
	testRule(t, "selector-vpc-mismatch", []ruleCase{
		{name: "cluster-vpc", in: nodeClass("default", eksSpec), facts: clusterFacts()},
		{name: "nothing-selected", in: nodeClass("typo", subnetSel("  - tags:\n      karpenter.sh/discovery: prod-eks-cluster\n")), facts: clusterFacts()},
		{name: "subnet-by-id", fires: 1, in: nodeClass("shared", subnetSel("  - id: "+privateA+"\n  - id: "+sharedSub+"\n")), facts: clusterFacts()},
		{name: "legacy-discovery-tag", fires: 2, in: nodeClass("legacy", specWith(
			subnetTerms, "subnetSelectorTerms:\n  - tags:\n      karpenter.sh/discovery: prod-eks-legacy\n",
			groupTerms, "securityGroupSelectorTerms:\n  - tags:\n      karpenter.sh/discovery: prod-eks-legacy\n")), facts: clusterFacts()},
		{name: "group-by-name", fires: 1, in: nodeClass("legacy-sg", groupSel("  - name: prod-eks-node\n  - name: legacy-nodes\n")), facts: clusterFacts()},
		{name: "vpc-unknown", in: nodeClass("default", eksSpec), facts: clusterFacts(clusterField("vpcID", "")), notEvaluated: "not in the facts snapshot: cluster.vpcId"},
		{name: "subnets-unknown", in: nodeClass("default", eksSpec), facts: clusterFacts(without("subnets")), notEvaluated: "subnets"},
		{name: "groups-unknown", in: nodeClass("default", eksSpec), facts: clusterFacts(without("securityGroups")), notEvaluated: "securityGroups"},
		{name: "no-facts", in: nodeClass("default", eksSpec), notEvaluated: "no facts: subnets, securityGroups, cluster.vpcId"},
	})
}
