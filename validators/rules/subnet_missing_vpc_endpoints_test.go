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
		// us-east-1a also has a subnet with a NAT gateway: Karpenter may launch there, so a warning.
		{name: "isolated-beside-a-nat-subnet-capped", fires: 1, in: nodeClass("default", eksSpec), facts: netFacts(append(isolatedWorld(usableEndpoints("s3")...),
			subnets(
				netSubnet(isolatedA, "us-east-1a", "use1-az1", "10.0.96.0/20", 4000, "rtb-0iso", false, false, "{karpenter.sh/discovery: prod-eks}", route("pl-63a5400a", "vpce-0s3")),
				netSubnet(privateA, "us-east-1a", "use1-az1", "10.0.32.0/19", 4011, "rtb-0priva", false, false, "{karpenter.sh/discovery: prod-eks}", route("0.0.0.0/0", natA)),
				netSubnet(cpSubnetA, "us-east-1a", "use1-az1", "10.0.8.0/28", 9, "rtb-0priva", false, false, "{}", route("0.0.0.0/0", natA)),
				netSubnet(cpSubnetB, "us-east-1b", "use1-az2", "10.0.8.16/28", 9, "rtb-0priva", false, false, "{}", route("0.0.0.0/0", natA))))...)},
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
