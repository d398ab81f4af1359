package rules_test

import "testing"

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
