package rules_test

import "testing"

func TestNodeUsernameMismatch(t *testing.T) {
	const created = "2025-06-01T10:00:00Z"
	configMap, api := mode("CONFIG_MAP"), mode("API")
	withUser := func(arn, user string) string {
		return "- rolearn: " + arn + "\n  username: " + user + "\n  groups: " + nodeGroups + "\n"
	}
	others := mapping(oldNodesARN, nodeGroups)
	gateOff := withUserData(eksSpec, "", "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  featureGates:\n    InstanceIdNodeName: false\n")
	customByID := withUserData(withAMI("amiFamily: Custom\namiSelectorTerms:\n  - id: "+al2023x86+"\n"), "", instanceIDNodeConfig)
	testRule(t, "node-username-mismatch", []ruleCase{
		{name: "entry-private-dns", in: nodeClass("default", eksSpec), facts: clusterFacts()},
		{name: "mapping-private-dns", in: nodeClass("default", eksSpec), facts: clusterFacts(configMap)},
		{name: "windows-entry", in: nodeClass("windows", windowsSpec(winRole)), facts: clusterFacts()},
		{name: "gate-off", in: nodeClass("default", gateOff), facts: clusterFacts(configMap)},
		// aws-auth in effect: its username.
		{name: "mapping-other-username", fires: 1, in: nodeClass("default", eksSpec),
			facts: clusterFacts(configMap, withAWSAuth(others, withUser(nodeRoleARN, "karpenter-node")))},
		{name: "mapping-session-name-for-dns-names", fires: 1, in: nodeClass("default", eksSpec),
			facts: clusterFacts(entries(), withAWSAuth(others, withUser(nodeRoleARN, "system:node:{{SessionName}}")))},
		{name: "mapping-without-bootstrappers", fires: 1, in: nodeClass("default", eksSpec),
			facts: clusterFacts(configMap, withAWSAuth(others, "- rolearn: "+nodeRoleARN+"\n  username: admin\n  groups: [system:nodes]\n"))},
		{name: "input-aws-auth-entry-without-username", fires: 1, in: docs(nodeClass("default", eksSpec), awsAuth("mapRoles: |\n  - rolearn: "+nodeRoleARN+"\n    groups: "+nodeGroups+"\n")),
			facts: clusterFacts(configMap, without("awsAuth"))},
		// Nodes named after their instance ID.
		{name: "instance-id-ec2-entry", in: nodeClass("by-id", instanceIDSpec), facts: clusterFacts(api, entries(entry(nodeRoleARN, "EC2", created)))},
		{name: "instance-id-session-name-mapping", in: nodeClass("by-id", instanceIDSpec),
			facts: clusterFacts(configMap, withAWSAuth(withUser(nodeRoleARN, "system:node:{{SessionName}}")))},
		{name: "instance-id-session-name-raw-mapping", in: nodeClass("by-id", instanceIDSpec),
			facts: clusterFacts(configMap, withAWSAuth(withUser(nodeRoleARN, "system:node:{{SessionNameRaw}}")))},
		{name: "instance-id-linux-entry", fires: 1, in: nodeClass("by-id", instanceIDSpec), facts: clusterFacts()},
		{name: "instance-id-dns-mapping", fires: 1, in: nodeClass("by-id", instanceIDSpec), facts: clusterFacts(configMap)},
		{name: "instance-id-dns-mapping-hybrid", fires: 1, in: nodeClass("by-id", instanceIDSpec), facts: clusterFacts(entries())},
		{name: "instance-id-custom-nodeadm", fires: 1, in: nodeClass("custom", customByID), facts: clusterFacts()},
		// Other rules report these.
		{name: "standard-entry", in: nodeClass("default", eksSpec), facts: clusterFacts(entries(entry(nodeRoleARN, "STANDARD", created)))},
		{name: "ec2-entry-for-dns-names", in: nodeClass("default", eksSpec), facts: clusterFacts(api, entries(entry(nodeRoleARN, "EC2", created)))},
		{name: "not-mapped", in: nodeClass("default", eksSpec), facts: clusterFacts(configMap, withAWSAuth(others))},
		{name: "api-no-entry", in: nodeClass("default", eksSpec), facts: clusterFacts(api, entries(), without("awsAuth"))},
		// Unknown: not evaluated, never passed.
		{name: "aws-auth-unknown", in: nodeClass("default", eksSpec), facts: clusterFacts(entries(), without("awsAuth")), notEvaluated: "awsAuth"},
		{name: "entries-unknown", in: nodeClass("default", eksSpec), facts: clusterFacts(api, without("accessEntries")), notEvaluated: "accessEntries"},
		{name: "mode-unknown", in: nodeClass("default", eksSpec), facts: clusterFacts(mode("")), notEvaluated: "not in the facts snapshot: cluster.authenticationMode"},
		{name: "no-facts", in: nodeClass("default", eksSpec), notEvaluated: "no facts"},
	})
}
