package rules_test

import "testing"

func TestSubnetFreeIPsLow(t *testing.T) {
	withFree := func(a, a2 int) factsOpt {
		return subnets(
			netSubnet(privateA, "us-east-1a", "use1-az1", "10.0.32.0/19", a, "rtb-0priva", false, false, "{karpenter.sh/discovery: prod-eks}", route("0.0.0.0/0", natA)),
			netSubnet(isolatedA, "us-east-1a", "use1-az1", "10.0.96.0/20", a2, "rtb-0priva", false, false, "{karpenter.sh/discovery: prod-eks}", route("0.0.0.0/0", natA)),
			netSubnet(privateB, "us-east-1b", "use1-az2", "10.0.64.0/19", 3990, "rtb-0privb", false, false, "{karpenter.sh/discovery: prod-eks}", route("0.0.0.0/0", natB)),
			netSubnet(cpSubnetA, "us-east-1a", "use1-az1", "10.0.8.0/28", 9, "rtb-0priva", false, false, "{}"),
			netSubnet(cpSubnetB, "us-east-1b", "use1-az2", "10.0.8.16/28", 9, "rtb-0privb", false, false, "{}"),
		)
	}
	testRule(t, "subnet-free-ips-low", []ruleCase{
		{name: "plenty", in: nodeClass("default", eksSpec), facts: netFacts()},
		{name: "one-full-subnet-another-fine", in: nodeClass("default", eksSpec), facts: netFacts(withFree(0, 500))},
		{name: "zone-nearly-full", fires: 1, in: nodeClass("default", eksSpec), facts: netFacts(withFree(12, 20))},
		{name: "zone-full", fires: 1, in: nodeClass("default", eksSpec), facts: netFacts(withFree(0, 0))},
		{name: "threshold-configured", in: nodeClass("default", eksSpec), facts: netFacts(withFree(12, 20)), cfg: "apiVersion: karpenter-guard.io/v1alpha1\nkind: GuardConfig\nsubnets:\n  minFreeIPs: 16\n"},
		{name: "old-snapshot", in: nodeClass("default", eksSpec), facts: clusterFacts(clusterField("ipFamily", "ipv4")), notEvaluated: "no availableIpAddressCount"},
	})
}
