package rules_test

import "testing"

// nodeEntry is a node role's mapRoles entry, unindented, with its groups as given.
func nodeEntry(arn, groups string) string {
	return "- rolearn: " + arn + "\n  username: system:node:{{EC2PrivateDNSName}}\n  groups:\n" + groups
}

const (
	bothNodeGroups = "    - system:bootstrappers\n    - system:nodes\n"
	// gluedNodeGroups is aws-iam-authenticator's aws-auth-space-out-of-place.yaml: one space too many
	// before the second item makes YAML read one group, "system:bootstrappers - system:nodes".
	gluedNodeGroups = "    - system:bootstrappers\n     - system:nodes\n"
	karpenterARN    = "arn:aws:iam::111122223333:role/KarpenterNodeRole-prod"
	adminEntry      = "- rolearn: arn:aws:iam::111122223333:role/admin\n  username: admin\n  groups: [system:masters]\n"
)

// mapRolesValue renders data.mapRoles as a block string holding the entries.
func mapRolesValue(key string, entries ...string) string {
	var s string
	for _, e := range entries {
		s += e
	}
	return key + ": |\n" + indent(s, "  ")
}

func TestAWSAuthMalformed(t *testing.T) {
	testRule(t, "aws-auth-malformed", []ruleCase{
		{name: "good", in: awsAuth("mapRoles: |\n  ---\n  - rolearn: arn:aws:iam::111122223333:role/KarpenterNodeRole-prod\n    username: system:node:{{EC2PrivateDNSName}}\n    groups:\n      - system:bootstrappers\n      - system:nodes\nmapAccounts: |\n  - \"111122223333\"\n")},
		// aws-iam-authenticator's own fixtures load these: encoding/json matches keys in any case.
		{name: "keys-in-any-case", in: awsAuth("mapRoles: |\n  - roleARN: arn:aws:iam::111122223333:role/KarpenterNodeRole-prod\n    UserName: system:node:{{EC2PrivateDNSName}}\n    Groups:\n      - system:bootstrappers\n      - system:nodes\n  - rOlEaRn: arn:aws:iam::111122223333:role/admin\n    username: admin\n    groups: [system:masters]\n")},
		// EKS keeps the entry with the empty username: the node authorizer wants system:node:<name>.
		{name: "missing-username", fires: 1, in: awsAuth("mapRoles: |\n  - rolearn: arn:aws:iam::111122223333:role/a\n    username: system:node:{{EC2PrivateDNSName}}\n    groups: [system:bootstrappers, system:nodes]\n  - rolearn: arn:aws:iam::111122223333:role/b\n    usernmae: system:node:{{EC2PrivateDNSName}}\n    groups: [system:bootstrappers, system:nodes]\n")},
		{name: "missing-username-not-for-nodes", fires: 1, in: awsAuth(mapRolesValue("mapRoles", nodeEntry(karpenterARN, bothNodeGroups), "- rolearn: arn:aws:iam::111122223333:role/Dev\n"))},
		{name: "bad-yaml", fires: 1, in: awsAuth("mapRoles: |\n  - rolearn: arn:aws:iam::111122223333:role/a\n     username: x\n    groups: [a\n")},
		{name: "mapRoles-not-a-list", fires: 1, in: awsAuth("mapRoles: |\n  rolearn: " + karpenterARN + "\n  username: system:node:{{EC2PrivateDNSName}}\n")},
		// EKS keeps the other entries of mapRoles, and all of mapUsers: aws-auth-entry-ignored warns.
		{name: "one-bad-entry-not-for-nodes", in: awsAuth(mapRolesValue("mapRoles", nodeEntry(karpenterARN, bothNodeGroups), "- username: orphan\n  groups: [system:masters]\n", adminEntry))},
		{name: "bad-yaml-in-mapUsers", in: awsAuth("mapUsers: |\n  - userarn: \"arn:aws:iam::111122223333:user/ops\n" + mapRolesValue("mapRoles", nodeEntry(karpenterARN, bothNodeGroups)))},
		{name: "node-entry-dropped", fires: 1, in: awsAuth(mapRolesValue("mapRoles", adminEntry, "- rolearn: ["+karpenterARN+"]\n  username: system:node:{{EC2PrivateDNSName}}\n  groups: [system:bootstrappers, system:nodes]\n"))},
		{name: "node-groups-glued", fires: 1, in: awsAuth(mapRolesValue("mapRoles", nodeEntry(karpenterARN, gluedNodeGroups), adminEntry))},
		{name: "node-groups-string", fires: 1, in: awsAuth(mapRolesValue("mapRoles", "- rolearn: "+karpenterARN+"\n  username: system:node:{{EC2PrivateDNSName}}\n  groups: system:bootstrappers\n    - system:nodes\n"))},
		// The group items at the entry's indentation are entries of their own: strings, dropped.
		{name: "node-groups-outdented", fires: 2, in: awsAuth(mapRolesValue("mapRoles", "- rolearn: "+karpenterARN+"\n  username: system:node:{{EC2PrivateDNSName}}\n  groups:\n- system:bootstrappers\n- system:nodes\n"))},
		// A later entry for the same rolearn is what EKS keeps.
		{name: "node-entry-replaced", fires: 1, in: awsAuth(mapRolesValue("mapRoles", nodeEntry(karpenterARN, bothNodeGroups), "- rolearn: "+karpenterARN+"\n  username: admin\n  groups: [system:masters]\n"))},
		{name: "glued-entry-replaced-by-a-good-one", in: awsAuth(mapRolesValue("mapRoles", nodeEntry(karpenterARN, gluedNodeGroups), nodeEntry(karpenterARN, bothNodeGroups)))},
		// aws-iam-authenticator's aws-auth-lower-case-top-keys.yaml: nothing is mapped.
		{name: "node-role-under-maproles", fires: 1, in: awsAuth(mapRolesValue("maproles", nodeEntry(karpenterARN, bothNodeGroups)) + "mapusers: |\n  - userarn: arn:aws:iam::111122223333:user/admin\n    username: admin\n    groups: [system:masters]\n")},
		{name: "node-role-under-MapRoles-and-mapRoles", in: awsAuth(mapRolesValue("MapRoles", nodeEntry(karpenterARN, bothNodeGroups)) + mapRolesValue("mapRoles", nodeEntry(karpenterARN, bothNodeGroups)))},
		// aws-iam-authenticator's aws-auth-missing-bar.yaml: creating it fails.
		{name: "structure-not-string", fires: 1, in: awsAuth("mapRoles:\n  - rolearn: arn:aws:iam::111122223333:role/a\n    username: x\n")},
		{name: "number-not-string", fires: 1, in: awsAuth("mapAccounts: 111122223333\n")},
	})
}
