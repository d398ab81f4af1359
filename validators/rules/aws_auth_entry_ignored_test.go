package rules_test

import "testing"

func TestAWSAuthEntryIgnored(t *testing.T) {
	testRule(t, "aws-auth-entry-ignored", []ruleCase{
		{name: "good", in: awsAuth(mapRolesValue("mapRoles", nodeEntry(karpenterARN, bothNodeGroups), adminEntry) + "mapAccounts: |\n  - \"111122223333\"\n")},
		// The bug this rule was written for: EKS keeps the good entries around a bad one.
		{name: "one-bad-entry-keeps-the-others", fires: 1, in: awsAuth(mapRolesValue("mapRoles", nodeEntry(karpenterARN, bothNodeGroups), "- username: orphan\n  groups: [system:masters]\n", adminEntry))},
		{name: "mapUsers-not-valid-yaml", fires: 1, in: awsAuth("mapUsers: |\n  - userarn: \"arn:aws:iam::111122223333:user/ops\n    username: ops\n" + mapRolesValue("mapRoles", nodeEntry(karpenterARN, bothNodeGroups)))},
		{name: "mapAccounts-not-a-list", fires: 1, in: awsAuth("mapAccounts: \"111122223333\"\n")},
		{name: "mapAccounts-items", fires: 2, in: awsAuth("mapAccounts: |\n  - \"111122223333\"\n  - [444455556666]\n  - 11112222333\n")},
		{name: "entry-keys-never-read", fires: 2, in: awsAuth(mapRolesValue("mapRoles", "- rolearn: arn:aws:iam::111122223333:role/admin\n  username: admin\n  groups: [system:masters]\n  comment: break-glass\n  usergroups: [dev]\n"))},
		{name: "one-field-two-keys", fires: 1, in: awsAuth(mapRolesValue("mapRoles", "- RoleArn: arn:aws:iam::111122223333:role/old\n  rolearn: arn:aws:iam::111122223333:role/admin\n  username: admin\n  groups: [system:masters]\n"))},
		{name: "entry-replaced", fires: 1, in: awsAuth(mapRolesValue("mapRoles", adminEntry, "- rolearn: arn:aws:iam::111122223333:role/ADMIN\n  username: admin2\n  groups: [system:masters]\n"))},
		{name: "users-differing-in-case", fires: 2, in: awsAuth("mapUsers: |\n  - userarn: arn:aws:iam::111122223333:user/Ops\n    username: ops\n    groups: [system:masters]\n  - userarn: arn:aws:iam::111122223333:user/ops\n    username: ops2\n    groups: [view]\n")},
		{name: "sso-partition", fires: 1, in: awsAuth(mapRolesValue("mapRoles", "- sso:\n    permissionSetName: ViewOnlyAccess\n    accountID: \"111122223333\"\n    partition: aws\n  username: viewer\n  groups: [view]\n"))},
		{name: "sso-account-unquoted", fires: 1, in: awsAuth(mapRolesValue("mapRoles", "- sso:\n    permissionSetName: ViewOnlyAccess\n    accountID: 011122223333\n  username: viewer\n  groups: [view]\n"))},
		{name: "userid-mistyped", fires: 1, in: awsAuth(mapRolesValue("mapRoles", adminEntry+"  userid: 12\n"))},
		// aws-auth-malformed denies these.
		{name: "node-entry-dropped", in: awsAuth(mapRolesValue("mapRoles", adminEntry, "- rolearn: ["+karpenterARN+"]\n  username: system:node:{{EC2PrivateDNSName}}\n  groups: [system:bootstrappers, system:nodes]\n"))},
		{name: "mapRoles-not-valid-yaml", in: awsAuth("mapRoles: |\n  - rolearn: \"arn:aws:iam::111122223333:role/a\n")},
	})
}
