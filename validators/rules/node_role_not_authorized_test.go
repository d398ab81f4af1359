package rules_test

import "testing"

// droppedEntry is a mapRoles entry EKS drops (it has no rolearn), of no node role.
const droppedEntry = "- username: admin\n  groups: [system:masters]\n"

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
		// The username is node-username-mismatch's question, the Windows group
		// windows-node-missing-kube-proxy-group's: such mappings let nodes join.
		{name: "config-map-wrong-username", in: nodeClass("default", eksSpec),
			facts: clusterFacts(configMap, entries(), withAWSAuth(others,
				"- rolearn: "+nodeRoleARN+"\n  username: karpenter-node\n  groups: "+nodeGroups+"\n"))},
		// What EKS makes of the role's entry, read as it reads aws-auth.
		{name: "config-map-groups-glued", fires: 1, in: nodeClass("default", eksSpec),
			facts: clusterFacts(configMap, entries(), withAWSAuth(others,
				"- rolearn: "+nodeRoleARN+"\n  username: system:node:{{EC2PrivateDNSName}}\n  groups:\n    - system:bootstrappers\n     - system:nodes\n"))},
		{name: "config-map-replaced-by-a-later-entry", fires: 1, in: nodeClass("default", eksSpec),
			facts: clusterFacts(configMap, entries(), withAWSAuth(mapping(nodeRoleARN, nodeGroups), others,
				"- rolearn: "+nodeRoleARN+"\n  username: admin\n  groups: [system:masters]\n"))},
		{name: "config-map-under-a-key-eks-never-reads", fires: 1, in: nodeClass("default", eksSpec),
			facts: clusterFacts(configMap, entries(), section("awsAuth", "awsAuth:\n  maproles: |\n"+indent(mapping(nodeRoleARN, nodeGroups), "    ")))},
		{name: "hybrid-under-a-key-eks-never-reads", fires: 1, in: nodeClass("default", eksSpec),
			facts: clusterFacts(entries(), section("awsAuth", "awsAuth:\n  MapRoles: |\n"+indent(mapping(nodeRoleARN, nodeGroups), "    ")))},
		{name: "config-map-arn-case-insensitive", in: nodeClass("default", eksSpec),
			facts: clusterFacts(configMap, entries(), withAWSAuth(mapping("arn:aws:iam::111122223333:role/karpenternoderole-PROD-EKS", nodeGroups)))},
		{name: "config-map-windows-linux-groups", in: nodeClass("windows", windowsSpec(winRole)),
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
		{name: "hybrid-windows-linux-groups", in: nodeClass("windows", windowsSpec(winRole)),
			facts: clusterFacts(entries(), withAWSAuth(mapping(winRoleARN, nodeGroups)))},
		// An EC2_LINUX entry lets Windows nodes join; an EC2 entry, nodes named after their instance ID,
		// whose entry to create is of type EC2.
		{name: "api-windows-linux-entry", in: nodeClass("windows", windowsSpec(winRole)),
			facts: clusterFacts(api, entries(entry(winRoleARN, "EC2_LINUX", "2025-06-01T10:00:00Z")))},
		{name: "api-instance-id-ec2-entry", in: nodeClass("by-id", instanceIDSpec),
			facts: clusterFacts(api, entries(entry(nodeRoleARN, "EC2", "2025-06-01T10:00:00Z")))},
		{name: "api-instance-id-no-entry", fires: 1, in: nodeClass("by-id", instanceIDSpec), facts: clusterFacts(api, entries())},
		{name: "config-map-instance-id-not-mapped", fires: 1, in: nodeClass("by-id", instanceIDSpec),
			facts: clusterFacts(configMap, entries(), withAWSAuth(others))},
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
		// aws-auth is what EKS keeps of it: an entry it drops costs only itself, so the rule judges with
		// the rest, and says so when the dropped entry is the node role's own.
		{name: "input-aws-auth-entry-without-username", in: docs(nodeClass("default", eksSpec), awsAuth("mapRoles: |\n  - rolearn: "+nodeRoleARN+"\n    groups: "+nodeGroups+"\n")),
			facts: clusterFacts(configMap, without("awsAuth"))},
		{name: "input-aws-auth-other-entry-dropped", in: docs(nodeClass("default", eksSpec),
			awsAuth("mapRoles: |\n"+indent(droppedEntry+mapping(nodeRoleARN, nodeGroups), "  "))),
			facts: clusterFacts(configMap, without("awsAuth"))},
		{name: "config-map-other-entry-dropped", in: nodeClass("default", eksSpec),
			facts: clusterFacts(configMap, entries(), withAWSAuth(droppedEntry, mapping(nodeRoleARN, nodeGroups)))},
		{name: "config-map-other-key-ignored", in: nodeClass("default", eksSpec),
			facts: clusterFacts(configMap, entries(), section("awsAuth", mapRoles(mapping(nodeRoleARN, nodeGroups))+"  mapUsers: \"- userarn: [\"\n"))},
		{name: "config-map-entry-dropped-rolearn-and-sso", fires: 1, in: nodeClass("default", eksSpec),
			facts: clusterFacts(configMap, entries(), withAWSAuth(others,
				mapping(nodeRoleARN, nodeGroups)+"  sso:\n    permissionSetName: Admin\n    accountID: \"111122223333\"\n"))},
		{name: "config-map-entry-dropped-rolearn-misspelt", fires: 1, in: nodeClass("default", eksSpec),
			facts: clusterFacts(configMap, entries(), withAWSAuth(others,
				"- role_arn: "+nodeRoleARN+"\n  username: system:node:{{EC2PrivateDNSName}}\n  groups: "+nodeGroups+"\n"))},
		{name: "config-map-entry-dropped-rolearn-a-list", fires: 1, in: nodeClass("default", eksSpec),
			facts: clusterFacts(configMap, entries(), withAWSAuth(others,
				"- rolearn: ["+nodeRoleARN+"]\n  username: system:node:{{EC2PrivateDNSName}}\n  groups: "+nodeGroups+"\n"))},
		{name: "hybrid-entry-dropped", fires: 1, in: nodeClass("default", eksSpec),
			facts: clusterFacts(entries(), withAWSAuth(others,
				"- rolarn: "+nodeRoleARN+"\n  username: system:node:{{EC2PrivateDNSName}}\n  groups: "+nodeGroups+"\n"))},
		{name: "input-aws-auth-node-entry-dropped", fires: 1, in: docs(nodeClass("default", eksSpec),
			awsAuth("mapRoles: |\n"+indent(others+"- role_arn: "+nodeRoleARN+"\n  username: system:node:{{EC2PrivateDNSName}}\n  groups: "+nodeGroups+"\n", "  "))),
			facts: clusterFacts(configMap, without("awsAuth"))},
		{name: "input-aws-auth-not-a-string", in: docs(nodeClass("default", eksSpec), awsAuth("mapRoles:\n  - rolearn: "+nodeRoleARN+"\n")),
			facts: clusterFacts(configMap, without("awsAuth")), notEvaluated: "not a string"},
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
