package validators_test

import "testing"

// subnetSel and groupSel replace eksSpec's subnet or security-group terms.
func subnetSel(terms string) string {
	return specWith(subnetTerms, "subnetSelectorTerms:\n"+terms)
}

func groupSel(terms string) string {
	return specWith(groupTerms, "securityGroupSelectorTerms:\n"+terms)
}

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

func TestSubnetPublic(t *testing.T) {
	testRule(t, "subnet-public", []ruleCase{
		{name: "private", in: nodeClass("default", eksSpec), facts: clusterFacts()},
		{name: "public-ip-deliberate", in: nodeClass("edge", subnetSel("  - id: "+publicA+"\n")+"associatePublicIPAddress: true\n"), facts: clusterFacts()},
		{name: "no-public-ip-deliberate", in: nodeClass("edge", subnetSel("  - id: "+publicB+"\n")+"associatePublicIPAddress: false\n"), facts: clusterFacts()},
		{name: "public-maps-ip", fires: 1, in: nodeClass("edge", subnetSel("  - id: "+publicA+"\n")), facts: clusterFacts()},
		{name: "discovery-tag-on-public-subnets", fires: 1, in: nodeClass("default", eksSpec), facts: clusterFacts(subnets(
			subnet(privateA, clusterVPC, "us-east-1a", false, false, "{karpenter.sh/discovery: prod-eks, Name: prod-eks-private-us-east-1a}"),
			subnet(publicA, clusterVPC, "us-east-1a", true, true, "{karpenter.sh/discovery: prod-eks, Name: prod-eks-public-us-east-1a}"),
			subnet(publicB, clusterVPC, "us-east-1b", false, true, "{karpenter.sh/discovery: prod-eks, Name: prod-eks-public-us-east-1b}"),
		))},
		{name: "subnets-unknown", in: nodeClass("edge", subnetSel("  - id: "+publicA+"\n")), facts: clusterFacts(without("subnets")), notEvaluated: "not in the facts snapshot: subnets"},
		{name: "no-facts", in: nodeClass("default", eksSpec), notEvaluated: "no facts: subnets"},
	})
}
