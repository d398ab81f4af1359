package validators_test

import (
	"testing"
)

const (
	windowsAlias  = "amiSelectorTerms:\n  - alias: windows2022@latest\n"
	windowsGroups = "[system:bootstrappers, system:nodes, eks:kube-proxy-windows]"
	// reRecreated is the node role deleted and created again after its access entry was made.
	roleRecreated = "2025-09-15T14:30:00Z"
)

// windowsSpec is a Windows 2022 class booting with role.
func windowsSpec(role string) string {
	return specWith(al2023Alias, windowsAlias, defaultRole, "role: "+role+"\n")
}

func TestNodeRoleNotAuthorized(t *testing.T) {
	configMap, api := mode("CONFIG_MAP"), mode("API")
	others := mapping(oldNodesARN, nodeGroups)
	testRule(t, "node-role-not-authorized", []ruleCase{
		{name: "entry-and-mapping", in: nodeClass("default", eksSpec), facts: clusterFacts()},
		// CONFIG_MAP reads only aws-auth.
		{name: "config-map-maps-role", in: nodeClass("default", eksSpec), facts: clusterFacts(configMap, entries())},
		{name: "config-map-not-mapped", fires: 1, in: nodeClass("default", eksSpec),
			facts: clusterFacts(configMap, entries(), withAWSAuth(others))},
		{name: "config-map-ignores-entry", fires: 1, in: nodeClass("default", eksSpec),
			facts: clusterFacts(configMap, withAWSAuth(others))},
		{name: "config-map-no-configmap", fires: 1, in: nodeClass("default", eksSpec),
			facts: clusterFacts(configMap, entries(), noConfigMap())},
		{name: "config-map-without-bootstrappers", fires: 1, in: nodeClass("default", eksSpec),
			facts: clusterFacts(configMap, entries(), withAWSAuth(others, mapping(nodeRoleARN, "[system:nodes]")))},
		{name: "config-map-wrong-username", fires: 1, in: nodeClass("default", eksSpec),
			facts: clusterFacts(configMap, entries(), withAWSAuth(others,
				"- rolearn: "+nodeRoleARN+"\n  username: karpenter-node\n  groups: "+nodeGroups+"\n"))},
		{name: "config-map-arn-case-insensitive", in: nodeClass("default", eksSpec),
			facts: clusterFacts(configMap, entries(), withAWSAuth(mapping("arn:aws:iam::111122223333:role/karpenternoderole-PROD-EKS", nodeGroups)))},
		{name: "config-map-windows-linux-groups", fires: 1, in: nodeClass("windows", windowsSpec(winRole)),
			facts: clusterFacts(configMap, entries(), withAWSAuth(mapping(winRoleARN, nodeGroups)))},
		{name: "config-map-windows-not-mapped", fires: 1, in: nodeClass("windows", windowsSpec(winRole)),
			facts: clusterFacts(configMap, entries(), withAWSAuth(others))},
		// API reads only access entries.
		{name: "api-entry", in: nodeClass("default", eksSpec), facts: clusterFacts(api, noConfigMap())},
		{name: "api-aws-auth-maps-in-vain", fires: 1, in: nodeClass("default", eksSpec),
			facts: clusterFacts(api, entries(entry(adminRoleARN, "STANDARD", "2025-05-01T08:00:00Z")))},
		{name: "api-no-entry-aws-auth-unknown", fires: 1, in: nodeClass("default", eksSpec),
			facts: clusterFacts(api, entries(), without("awsAuth"))},
		{name: "api-pathed-role-pathless-principal", in: nodeClass("platform", withRole("role: "+teamRole+"\n")),
			facts: clusterFacts(api, entries(entry(teamRolePathless, "EC2_LINUX", "2025-06-01T10:00:00Z")))},
		{name: "api-principal-case-insensitive", in: nodeClass("default", eksSpec),
			facts: clusterFacts(api, entries(entry("arn:aws:iam::111122223333:role/karpenternoderole-prod-eks", "EC2_LINUX", "2025-06-01T10:00:00Z")))},
		// API_AND_CONFIG_MAP reads both; an entry wins.
		{name: "hybrid-mapping-only", in: nodeClass("default", eksSpec), facts: clusterFacts(entries())},
		{name: "hybrid-entry-only", in: nodeClass("default", eksSpec), facts: clusterFacts(noConfigMap())},
		{name: "hybrid-entry-aws-auth-unknown", in: nodeClass("default", eksSpec), facts: clusterFacts(without("awsAuth"))},
		{name: "hybrid-neither", fires: 1, in: nodeClass("default", eksSpec), facts: clusterFacts(entries(), withAWSAuth(others))},
		{name: "hybrid-mapping-without-bootstrappers", fires: 1, in: nodeClass("default", eksSpec),
			facts: clusterFacts(entries(), withAWSAuth(mapping(nodeRoleARN, "[system:nodes]")))},
		{name: "hybrid-windows-linux-groups", fires: 1, in: nodeClass("windows", windowsSpec(winRole)),
			facts: clusterFacts(entries(), withAWSAuth(mapping(winRoleARN, nodeGroups)))},
		// The role behind spec.instanceProfile goes through the same check; so does an ARN in spec.role.
		{name: "instance-profile-role-authorized", in: nodeClass("profile", withRole("instanceProfile: "+nodeProfile+"\n")), facts: clusterFacts()},
		{name: "instance-profile-role-unauthorized", fires: 1, in: nodeClass("legacy", withRole("instanceProfile: "+legacyProfile+"\n")), facts: clusterFacts()},
		{name: "instance-profile-role-config-map", fires: 1, in: nodeClass("legacy", withRole("instanceProfile: "+legacyProfile+"\n")),
			facts: clusterFacts(configMap)},
		{name: "role-arn-with-path", in: nodeClass("platform", withRole("role: "+teamRoleARN+"\n")), facts: clusterFacts(configMap)},
		{name: "role-unauthorized", fires: 1, in: nodeClass("legacy", withRole("role: "+legacyRole+"\n")), facts: clusterFacts()},
		// Other rules report these.
		{name: "role-missing", in: nodeClass("typo", withRole("role: KarpenterNodeRole-prod\n")), facts: clusterFacts()},
		{name: "profile-empty", in: nodeClass("staging", withRole("instanceProfile: "+emptyProfile+"\n")), facts: clusterFacts()},
		{name: "entry-type-wrong", in: nodeClass("default", eksSpec),
			facts: clusterFacts(entries(entry(nodeRoleARN, "STANDARD", "2025-06-01T10:00:00Z")))},
		{name: "mapping-pathed", in: nodeClass("platform", withRole("role: "+teamRole+"\n")),
			facts: clusterFacts(configMap, withAWSAuth(mapping(teamRoleARN, nodeGroups)))},
		// aws-auth from the input, when the snapshot has none.
		{name: "input-aws-auth-maps", in: docs(nodeClass("default", eksSpec), awsAuth("mapRoles: |\n"+indent(mapping(nodeRoleARN, nodeGroups), "  "))),
			facts: clusterFacts(configMap, without("awsAuth"))},
		{name: "input-aws-auth-does-not-map", fires: 1, in: docs(nodeClass("default", eksSpec), awsAuth("mapRoles: |\n"+indent(others, "  "))),
			facts: clusterFacts(configMap, without("awsAuth"))},
		{name: "input-aws-auth-malformed", in: docs(nodeClass("default", eksSpec), awsAuth("mapRoles: |\n  - rolearn: "+nodeRoleARN+"\n    groups: "+nodeGroups+"\n")),
			facts: clusterFacts(configMap, without("awsAuth")), notEvaluated: "the aws-auth ConfigMap in the input is malformed"},
		// Unknown facts: not evaluated, never passed.
		{name: "no-facts", in: nodeClass("default", eksSpec), notEvaluated: "no facts: cluster.authenticationMode, roles"},
		{name: "mode-unknown", in: nodeClass("default", eksSpec), facts: clusterFacts(mode("")), notEvaluated: "not in the facts snapshot: cluster.authenticationMode"},
		{name: "roles-unknown", in: nodeClass("default", eksSpec), facts: clusterFacts(without("roles")), notEvaluated: "not in the facts snapshot: roles"},
		{name: "config-map-aws-auth-unknown", in: nodeClass("default", eksSpec), facts: clusterFacts(configMap, without("awsAuth")), notEvaluated: "awsAuth"},
		{name: "hybrid-no-entry-aws-auth-unknown", in: nodeClass("default", eksSpec), facts: clusterFacts(entries(), without("awsAuth")), notEvaluated: "awsAuth"},
		{name: "api-entries-unknown", in: nodeClass("default", eksSpec), facts: clusterFacts(api, without("accessEntries")), notEvaluated: "accessEntries"},
		{name: "profiles-unknown", in: nodeClass("profile", withRole("instanceProfile: "+nodeProfile+"\n")), facts: clusterFacts(without("instanceProfiles")), notEvaluated: "instanceProfiles"},
	})
}

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
		{name: "windows-with-linux-entry", fires: 1, in: nodeClass("windows", windowsSpec(winRole)),
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

func TestNodeRoleAccessEntryStale(t *testing.T) {
	recreated := roles(role(nodeRole, "/", roleRecreated), role(teamRole, "/teams/platform/", roleRecreated))
	testRule(t, "node-role-access-entry-stale", []ruleCase{
		{name: "entry-after-role", in: nodeClass("default", eksSpec), facts: clusterFacts()},
		{name: "role-recreated", fires: 1, in: nodeClass("default", eksSpec), facts: clusterFacts(recreated)},
		{name: "role-recreated-api", fires: 1, in: nodeClass("platform", withRole("role: "+teamRole+"\n")), facts: clusterFacts(recreated, mode("API"))},
		{name: "config-map-ignores-entries", in: nodeClass("default", eksSpec), facts: clusterFacts(recreated, mode("CONFIG_MAP"))},
		{name: "role-without-create-date", in: nodeClass("default", eksSpec), facts: clusterFacts(roles(role(nodeRole, "/", "")))},
		{name: "no-entry", in: nodeClass("default", eksSpec), facts: clusterFacts(recreated, entries())},
		{name: "entries-unknown", in: nodeClass("default", eksSpec), facts: clusterFacts(recreated, without("accessEntries")), notEvaluated: "accessEntries"},
		{name: "roles-unknown", in: nodeClass("default", eksSpec), facts: clusterFacts(without("roles")), notEvaluated: "roles"},
	})
}

func TestAWSAuthRoleARNHasPath(t *testing.T) {
	platform := nodeClass("platform", withRole("role: "+teamRole+"\n"))
	pathed := withAWSAuth(mapping(oldNodesARN, nodeGroups), mapping(teamRoleARN, nodeGroups))
	testRule(t, "aws-auth-rolearn-has-path", []ruleCase{
		{name: "pathless", in: platform, facts: clusterFacts(mode("CONFIG_MAP"))},
		{name: "config-map-pathed-only", fires: 1, in: platform, facts: clusterFacts(mode("CONFIG_MAP"), pathed)},
		{name: "config-map-pathed-and-pathless", in: platform,
			facts: clusterFacts(mode("CONFIG_MAP"), withAWSAuth(mapping(teamRoleARN, nodeGroups), mapping(teamRolePathless, nodeGroups)))},
		{name: "hybrid-pathed-no-entry", fires: 1, in: platform, facts: clusterFacts(pathed, entries())},
		{name: "hybrid-pathed-via-profile", fires: 1, in: nodeClass("platform-profile", withRole("instanceProfile: PlatformNodeProfile\n")),
			facts: clusterFacts(pathed, entries(), profiles(profile("PlatformNodeProfile", teamRole)))},
		// The mapping does not matter when an access entry decides, or when the mode ignores aws-auth.
		{name: "hybrid-pathed-entry-wins", in: platform, facts: clusterFacts(pathed)},
		{name: "api-ignores-aws-auth", in: platform, facts: clusterFacts(mode("API"), pathed, entries())},
		{name: "role-without-path", in: nodeClass("default", eksSpec), facts: clusterFacts(mode("CONFIG_MAP"))},
		{name: "mode-unknown", fires: 1, in: platform, facts: clusterFacts(mode(""), pathed)},
		{name: "aws-auth-unknown", in: platform, facts: clusterFacts(without("awsAuth")), notEvaluated: "not in the facts snapshot: awsAuth"},
		{name: "hybrid-entries-unknown", in: platform, facts: clusterFacts(pathed, without("accessEntries")), notEvaluated: "accessEntries"},
		{name: "no-facts", in: platform, notEvaluated: "no facts: awsAuth, roles"},
	})
}

func TestAL2023HybridAuth(t *testing.T) {
	byName := withAMI("amiFamily: AL2023\namiSelectorTerms:\n  - name: amazon-eks-node-al2023-x86_64-standard-1.33-*\n    owner: amazon\n")
	testRule(t, "al2023-hybrid-auth", []ruleCase{
		{name: "entry-and-mapping", in: nodeClass("default", eksSpec), facts: clusterFacts()},
		{name: "hybrid-entry-only", fires: 1, in: nodeClass("default", eksSpec), facts: clusterFacts(noConfigMap())},
		{name: "hybrid-entry-mapping-without-bootstrappers", fires: 1, in: nodeClass("default", eksSpec),
			facts: clusterFacts(withAWSAuth(mapping(nodeRoleARN, "[system:nodes]")))},
		{name: "api-entry", fires: 1, in: nodeClass("default", eksSpec), facts: clusterFacts(mode("API"))},
		{name: "api-amifamily-by-name", fires: 1, in: nodeClass("by-name", byName), facts: clusterFacts(mode("API"))},
		{name: "config-map", in: nodeClass("default", eksSpec), facts: clusterFacts(mode("CONFIG_MAP"))},
		{name: "bottlerocket", in: nodeClass("bottlerocket", withAMI("amiSelectorTerms:\n  - alias: bottlerocket@latest\n")), facts: clusterFacts(mode("API"))},
		{name: "windows", in: nodeClass("windows", windowsSpec(winRole)), facts: clusterFacts(mode("API"))},
		{name: "standard-entry", in: nodeClass("default", eksSpec), facts: clusterFacts(mode("API"), entries(entry(nodeRoleARN, "STANDARD", "2025-06-01T10:00:00Z")))},
		{name: "not-covered", in: nodeClass("legacy", withRole("role: "+legacyRole+"\n")), facts: clusterFacts(mode("API"))},
		{name: "input-aws-auth-maps", in: docs(nodeClass("default", eksSpec), awsAuth("mapRoles: |\n"+indent(mapping(nodeRoleARN, nodeGroups), "  "))),
			facts: clusterFacts(without("awsAuth"))},
		{name: "aws-auth-unknown", in: nodeClass("default", eksSpec), facts: clusterFacts(without("awsAuth")), notEvaluated: "not in the facts snapshot: awsAuth"},
		{name: "entries-unknown", in: nodeClass("default", eksSpec), facts: clusterFacts(without("accessEntries")), notEvaluated: "accessEntries"},
	})
}

func TestNodeRoleNotFound(t *testing.T) {
	testRule(t, "node-role-not-found", []ruleCase{
		{name: "exists", in: nodeClass("default", eksSpec), facts: clusterFacts()},
		{name: "arn-with-path", in: nodeClass("platform", withRole("role: "+teamRoleARN+"\n")), facts: clusterFacts()},
		{name: "path-and-name", in: nodeClass("platform", withRole("role: teams/platform/"+teamRole+"\n")), facts: clusterFacts()},
		{name: "instance-profile-spec", in: nodeClass("profile", withRole("instanceProfile: "+nodeProfile+"\n")), facts: clusterFacts()},
		{name: "typo", fires: 1, in: nodeClass("typo", withRole("role: KarpenterNodeRole-prod\n")), facts: clusterFacts()},
		{name: "instance-profile-name", fires: 1, in: nodeClass("profile-as-role", withRole("role: "+nodeProfile+"\n")), facts: clusterFacts()},
		{name: "empty-instance-profile-name", fires: 1, in: nodeClass("staging", withRole("role: "+emptyProfile+"\n")), facts: clusterFacts()},
		{name: "no-roles-at-all", fires: 1, in: nodeClass("default", eksSpec), facts: clusterFacts(roles())},
		{name: "profiles-unknown", fires: 1, in: nodeClass("profile-as-role", withRole("role: "+nodeProfile+"\n")), facts: clusterFacts(without("instanceProfiles"))},
		{name: "roles-unknown", in: nodeClass("default", eksSpec), facts: clusterFacts(without("roles")), notEvaluated: "not in the facts snapshot: roles"},
		{name: "no-facts", in: nodeClass("default", eksSpec), notEvaluated: "no facts: roles"},
	})
}
