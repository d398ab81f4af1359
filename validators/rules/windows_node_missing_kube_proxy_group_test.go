package rules_test

import "testing"

func TestWindowsNodeMissingKubeProxyGroup(t *testing.T) {
	const created = "2025-06-01T10:00:00Z"
	configMap, api := mode("CONFIG_MAP"), mode("API")
	windowsFamily := specWith(al2023Alias, "amiFamily: Windows2022\namiSelectorTerms:\n  - name: Windows_Server-2022-English-Core-EKS_Optimized-1.33-*\n    owner: amazon\n", defaultRole, "role: "+winRole+"\n")
	testRule(t, "windows-node-missing-kube-proxy-group", []ruleCase{
		{name: "windows-entry", in: nodeClass("windows", windowsSpec(winRole)), facts: clusterFacts()},
		{name: "windows-mapping", in: nodeClass("windows", windowsSpec(winRole)), facts: clusterFacts(configMap)},
		{name: "linux-class-linux-groups", in: nodeClass("default", eksSpec), facts: clusterFacts(configMap)},
		{name: "linux-entry", fires: 1, in: nodeClass("windows", windowsSpec(winRole)),
			facts: clusterFacts(api, entries(entry(winRoleARN, "EC2_LINUX", created)))},
		{name: "linux-entry-windows-family", fires: 1, in: nodeClass("windows", windowsFamily),
			facts: clusterFacts(entries(entry(winRoleARN, "EC2_LINUX", created)))},
		{name: "linux-groups-mapping", fires: 1, in: nodeClass("windows", windowsSpec(winRole)),
			facts: clusterFacts(configMap, withAWSAuth(mapping(winRoleARN, nodeGroups)))},
		{name: "linux-groups-mapping-hybrid", fires: 1, in: nodeClass("windows", windowsSpec(winRole)),
			facts: clusterFacts(entries(), withAWSAuth(mapping(winRoleARN, nodeGroups)))},
		// The entry wins over aws-auth; other rules report mappings that do not let nodes join.
		{name: "windows-entry-wins", in: nodeClass("windows", windowsSpec(winRole)), facts: clusterFacts(withAWSAuth(mapping(winRoleARN, nodeGroups)))},
		{name: "mapping-without-bootstrappers", in: nodeClass("windows", windowsSpec(winRole)),
			facts: clusterFacts(configMap, withAWSAuth(mapping(winRoleARN, "[system:nodes]")))},
		{name: "standard-entry", in: nodeClass("windows", windowsSpec(winRole)), facts: clusterFacts(api, entries(entry(winRoleARN, "STANDARD", created)))},
		{name: "not-mapped", in: nodeClass("windows", windowsSpec(winRole)), facts: clusterFacts(configMap, withAWSAuth(mapping(oldNodesARN, nodeGroups)))},
		// Unknown: not evaluated, never passed.
		{name: "aws-auth-unknown", in: nodeClass("windows", windowsSpec(winRole)), facts: clusterFacts(configMap, without("awsAuth")), notEvaluated: "awsAuth"},
		{name: "entries-unknown", in: nodeClass("windows", windowsSpec(winRole)), facts: clusterFacts(api, without("accessEntries")), notEvaluated: "accessEntries"},
		{name: "no-facts", in: nodeClass("windows", windowsSpec(winRole)), notEvaluated: "no facts"},
	})
}
