package rules_test

import "testing"

func TestAPIServerUnreachable(t *testing.T) {
	testRule(t, "api-server-unreachable", []ruleCase{
		{name: "private-endpoint-on", in: nodeClass("default", eksSpec), facts: netFacts(isolatedWorld()...)},
		{name: "public-endpoint-open-through-nat", in: nodeClass("default", eksSpec), facts: netFacts(privateEndpointOff("0.0.0.0/0"))},
		{name: "nat-address-allowed", in: nodeClass("default", eksSpec), facts: netFacts(privateEndpointOff("203.0.113.0/24"))},
		{name: "isolated-subnets-public-only", fires: 1, in: nodeClass("default", eksSpec), facts: netFacts(append(isolatedWorld(), privateEndpointOff("0.0.0.0/0"))...)},
		{name: "nat-address-not-allowed", fires: 1, in: nodeClass("default", eksSpec), facts: netFacts(privateEndpointOff("198.51.100.0/24"))},
		{name: "one-nat-allowed-other-not", fires: 1, in: nodeClass("default", eksSpec), facts: netFacts(privateEndpointOff("203.0.113.10/32"))},
		{name: "igw-with-restricted-cidrs-capped", fires: 1, in: nodeClass("edge", subnetSel("  - id: "+publicA+"\n")), facts: netFacts(privateEndpointOff("198.51.100.0/24"))},
		{name: "igw-without-public-ip", fires: 1, in: nodeClass("edge", subnetSel("  - id: "+publicB+"\n")), facts: netFacts(privateEndpointOff("0.0.0.0/0"))},
		{name: "nat-gateways-unknown", in: nodeClass("default", eksSpec), facts: netFacts(privateEndpointOff("198.51.100.0/24"), without("natGateways")), notEvaluated: "natGateways"},
		{name: "ipv6-cluster", in: nodeClass("default", eksSpec), facts: netFacts(privateEndpointOff("0.0.0.0/0"), clusterField("ipFamily", "ipv6")), notEvaluated: "IPv6 clusters are not modelled"},
		{name: "old-snapshot", in: nodeClass("default", eksSpec), facts: clusterFacts(), notEvaluated: "not in the facts snapshot"},
	})
}
