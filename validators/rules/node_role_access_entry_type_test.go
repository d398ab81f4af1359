package rules_test

import "testing"

func TestNodeRoleAccessEntryType(t *testing.T) {
	created := "2025-06-01T10:00:00Z"
	testRule(t, "node-role-access-entry-type", []ruleCase{
		{name: "ec2-linux", in: nodeClass("default", eksSpec), facts: clusterFacts()},
		{name: "ec2-windows", in: nodeClass("windows", windowsSpec(winRole)), facts: clusterFacts()},
		{name: "standard-api", fires: 1, in: nodeClass("default", eksSpec),
			facts: clusterFacts(mode("API"), entries(entry(nodeRoleARN, "STANDARD", created)))},
		{name: "standard-hybrid-mapping-ignored", fires: 1, in: nodeClass("default", eksSpec),
			facts: clusterFacts(entries(entry(nodeRoleARN, "STANDARD", created)))},
		{name: "standard-hybrid-aws-auth-unknown", fires: 1, in: nodeClass("default", eksSpec),
			facts: clusterFacts(entries(entry(nodeRoleARN, "STANDARD", created)), without("awsAuth"))},
		{name: "auto-mode-type", fires: 1, in: nodeClass("default", eksSpec),
			facts: clusterFacts(mode("API"), entries(entry(nodeRoleARN, "EC2", created)))},
		// Nodes named after their instance ID join with an EC2 entry (nodeadm's documentation creates one),
		// and with EC2_LINUX as far as the type goes (node-username-mismatch reports its username).
		{name: "instance-id-ec2", in: nodeClass("by-id", instanceIDSpec), facts: clusterFacts(mode("API"), entries(entry(nodeRoleARN, "EC2", created)))},
		{name: "instance-id-linux", in: nodeClass("by-id", instanceIDSpec), facts: clusterFacts(mode("API"))},
		{name: "instance-id-standard", fires: 1, in: nodeClass("by-id", instanceIDSpec),
			facts: clusterFacts(mode("API"), entries(entry(nodeRoleARN, "STANDARD", created)))},
		{name: "windows-ec2", fires: 1, in: nodeClass("windows", windowsSpec(winRole)),
			facts: clusterFacts(mode("API"), entries(entry(winRoleARN, "EC2", created)))},
		// EC2_LINUX lets Windows nodes join (windows-node-missing-kube-proxy-group warns of the group).
		{name: "windows-with-linux-entry", in: nodeClass("windows", windowsSpec(winRole)),
			facts: clusterFacts(mode("API"), entries(entry(winRoleARN, "EC2_LINUX", created)))},
		{name: "linux-with-windows-entry", fires: 1, in: nodeClass("default", eksSpec),
			facts: clusterFacts(mode("API"), entries(entry(nodeRoleARN, "EC2_WINDOWS", created)))},
		{name: "pathed-role-via-profile", fires: 1, in: nodeClass("legacy", withRole("instanceProfile: "+legacyProfile+"\n")),
			facts: clusterFacts(mode("API"), entries(entry(legacyRoleARN, "STANDARD", created)))},
		{name: "config-map-ignores-entries", in: nodeClass("default", eksSpec),
			facts: clusterFacts(mode("CONFIG_MAP"), entries(entry(nodeRoleARN, "STANDARD", created)))},
		{name: "no-entry", in: nodeClass("default", eksSpec), facts: clusterFacts(entries())},
		{name: "entries-unknown", in: nodeClass("default", eksSpec), facts: clusterFacts(without("accessEntries")), notEvaluated: "not in the facts snapshot: accessEntries"},
		{name: "no-facts", in: nodeClass("default", eksSpec), notEvaluated: "no facts"},
	})
}
