package rules_test

import "testing"

func TestSecurityGroupsBlockAPIServer(t *testing.T) {
	noNodeEgress := groups(
		netGroup(clusterSG, "eks-cluster-sg-prod-eks-1234567890", clusterVPC, "{aws:eks:cluster-name: prod-eks}", []string{tcpFrom(-1, clusterSG, ""), tcpFrom(443, nodeSG, "")}, allOut),
		netGroup(nodeSG, "prod-eks-node", clusterVPC, "{karpenter.sh/discovery: prod-eks}", []string{tcpFrom(10250, clusterSG, "")}, []string{tcpFrom(443, "", "10.0.8.0/28")}),
	)
	closedCluster := groups(
		netGroup(clusterSG, "eks-cluster-sg-prod-eks-1234567890", clusterVPC, "{aws:eks:cluster-name: prod-eks}", []string{tcpFrom(-1, clusterSG, "")}, allOut),
		netGroup(nodeSG, "prod-eks-node", clusterVPC, "{karpenter.sh/discovery: prod-eks}", []string{tcpFrom(10250, clusterSG, "")}, allOut),
	)
	testRule(t, "security-groups-block-api-server", []ruleCase{
		{name: "cluster-group-admits-the-nodes", in: nodeClass("default", eksSpec), facts: netFacts()},
		{name: "class-selects-the-cluster-group", in: nodeClass("default", eksSpec+"  - id: "+clusterSG+"\n"), facts: netFacts(closedCluster)},
		{name: "admitted-by-subnet-cidr", in: nodeClass("default", eksSpec), facts: netFacts(groups(
			netGroup(clusterSG, "eks-cluster-sg", clusterVPC, "{}", []string{tcpFrom(443, "", "10.0.0.0/16")}, allOut),
			netGroup(nodeSG, "prod-eks-node", clusterVPC, "{karpenter.sh/discovery: prod-eks}", nil, allOut)))},
		{name: "cluster-group-admits-nothing-from-the-nodes", fires: 1, in: nodeClass("default", eksSpec), facts: netFacts(closedCluster)},
		{name: "node-group-lets-443-out-to-one-control-plane-subnet", fires: 1, in: nodeClass("default", eksSpec), facts: netFacts(noNodeEgress)},
		{name: "prefix-list-capped", fires: 1, in: nodeClass("default", eksSpec), facts: netFacts(groups(
			netGroup(clusterSG, "eks-cluster-sg", clusterVPC, "{}", []string{"{protocol: tcp, fromPort: 443, toPort: 443, prefixListIDs: [pl-0nodes]}"}, allOut),
			netGroup(nodeSG, "prod-eks-node", clusterVPC, "{karpenter.sh/discovery: prod-eks}", nil, allOut)))},
		// A snapshot written without the cluster security group: what it admits is unknown.
		{name: "cluster-group-not-in-the-facts-capped", fires: 1, in: nodeClass("default", eksSpec), facts: netFacts(groups(
			netGroup(nodeSG, "prod-eks-node", clusterVPC, "{karpenter.sh/discovery: prod-eks}", nil, []string{tcpFrom(443, "", "192.168.0.0/16")})))},
		{name: "ipv6-cluster", in: nodeClass("default", eksSpec), facts: netFacts(closedCluster, clusterField("ipFamily", "ipv6")), notEvaluated: "IPv6 clusters are not modelled"},
		{name: "control-plane-network-unknown", in: nodeClass("default", eksSpec), facts: netFacts(clusterField("clusterSecurityGroupID", "")), notEvaluated: "not in the facts snapshot: cluster.controlPlaneNetwork"},
		{name: "old-snapshot", in: nodeClass("default", eksSpec), facts: clusterFacts(), notEvaluated: "not in the facts snapshot"},
	})
}
