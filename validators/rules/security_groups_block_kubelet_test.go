package rules_test

import "testing"

func TestSecurityGroupsBlockKubelet(t *testing.T) {
	testRule(t, "security-groups-block-kubelet", []ruleCase{
		{name: "node-group-admits-the-cluster-group", in: nodeClass("default", eksSpec), facts: netFacts()},
		{name: "admitted-from-the-control-plane-subnets", in: nodeClass("default", eksSpec), facts: netFacts(groups(defaultNetGroups(tcpFrom(10250, "", "10.0.8.0/24"))...))},
		{name: "no-10250", fires: 1, in: nodeClass("default", eksSpec), facts: netFacts(groups(defaultNetGroups(tcpFrom(-1, nodeSG, ""), tcpFrom(443, clusterSG, ""))...))},
		{name: "only-one-control-plane-subnet", fires: 1, in: nodeClass("default", eksSpec), facts: netFacts(groups(defaultNetGroups(tcpFrom(10250, "", "10.0.8.0/28"))...))},
		{name: "prefix-list", fires: 1, in: nodeClass("default", eksSpec), facts: netFacts(groups(defaultNetGroups("{protocol: tcp, fromPort: 10250, toPort: 10250, prefixListIDs: [pl-0cp]}")...))},
		{name: "ipv6-cluster", in: nodeClass("default", eksSpec), facts: netFacts(clusterField("ipFamily", "ipv6")), notEvaluated: "IPv6 clusters are not modelled"},
		{name: "old-snapshot", in: nodeClass("default", eksSpec), facts: clusterFacts(), notEvaluated: "not in the facts snapshot"},
	})
}
