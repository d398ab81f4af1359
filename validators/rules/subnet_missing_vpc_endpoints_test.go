package rules_test

import "testing"

func TestSubnetMissingVPCEndpoints(t *testing.T) {
	world := func(cniSection string, endpoints ...string) string {
		return netFacts(append(isolatedWorld(endpoints...), section("vpcCNI", cniSection))...)
	}
	aws := cni("true", "nodeRole")
	testRule(t, "subnet-missing-vpc-endpoints", []ruleCase{
		{name: "subnets-with-nat", in: nodeClass("default", eksSpec), facts: netFacts()},
		{name: "isolated-with-ec2-endpoint", in: nodeClass("default", eksSpec), facts: world(aws, usableEndpoints("ec2")...)},
		{name: "isolated-without-ec2-endpoint", fires: 1, in: nodeClass("default", eksSpec), facts: world(aws, usableEndpoints("s3", "ecr.api", "ecr.dkr")...)},
		{name: "ec2-endpoint-private-dns-off", fires: 1, in: nodeClass("default", eksSpec), facts: world(aws, endpoint("vpce-0ec2", "ec2", "Interface", "available", false, vpceSG, ""))},
		{name: "ec2-endpoint-group-refuses-the-nodes", fires: 1, in: nodeClass("default", eksSpec), facts: world(aws, endpoint("vpce-0ec2", "ec2", "Interface", "available", true, legacySG, ""))},
		{name: "ec2-endpoint-pending", fires: 1, in: nodeClass("default", eksSpec), facts: world(aws, endpoint("vpce-0ec2", "ec2", "Interface", "pendingAcceptance", true, vpceSG, ""))},
		{name: "irsa-cni-needs-sts", fires: 1, in: nodeClass("default", eksSpec), facts: world(cni("true", "irsa"), usableEndpoints("ec2")...)},
		{name: "pod-identity-cni-needs-eks-auth", fires: 1, in: nodeClass("default", eksSpec), facts: world(cni("true", "podIdentity"), usableEndpoints("ec2", "sts")...)},
		{name: "instance-id-naming-other-cni", in: nodeClass("default", instanceIDSpec), facts: world(cni("false", ""))},
		{name: "endpoints-unknown", in: nodeClass("default", eksSpec), facts: netFacts(append(isolatedWorld(), without("vpcEndpoints"))...), notEvaluated: "not in the facts snapshot: vpcEndpoints"},
		{name: "ipv6-cluster", in: nodeClass("default", eksSpec), facts: netFacts(append(isolatedWorld(), clusterField("ipFamily", "ipv6"))...), notEvaluated: "IPv6 clusters are not modelled"},
	})
}
