package rules_test

import "testing"

func TestPrivateEndpointDNSDisabled(t *testing.T) {
	vpc := func(support, hostnames string) factsOpt {
		return section("vpc", "vpc: {enableDnsSupport: "+support+", enableDnsHostnames: "+hostnames+"}\n")
	}
	testRule(t, "private-endpoint-dns-disabled", []ruleCase{
		{name: "dns-on", in: nodeClass("default", eksSpec), facts: netFacts()},
		{name: "public-only-endpoint", in: nodeClass("default", eksSpec), facts: netFacts(privateEndpointOff("0.0.0.0/0"), vpc("true", "false"))},
		{name: "hostnames-off-public-on", fires: 1, in: nodeClass("default", eksSpec), facts: netFacts(vpc("true", "false"))},
		{name: "both-off-private-only", fires: 1, in: nodeClass("default", eksSpec), facts: netFacts(vpc("false", "false"), clusterField("endpointPublicAccess", "false"))},
		{name: "vpc-unknown", in: nodeClass("default", eksSpec), facts: netFacts(without("vpc")), notEvaluated: "not in the facts snapshot: vpc"},
		{name: "endpoint-access-unknown", in: nodeClass("default", eksSpec), facts: clusterFacts(), notEvaluated: "not in the facts snapshot: cluster.endpointAccess"},
	})
}
