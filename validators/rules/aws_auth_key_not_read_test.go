package rules_test

import "testing"

func TestAWSAuthKeyNotRead(t *testing.T) {
	testRule(t, "aws-auth-key-not-read", []ruleCase{
		{name: "good", in: awsAuth(mapRolesValue("mapRoles", nodeEntry(karpenterARN, bothNodeGroups)) + "mapUsers: |\n  []\n")},
		{name: "copy-beside-mapRoles", fires: 1, in: awsAuth(mapRolesValue("maproles", nodeEntry(karpenterARN, bothNodeGroups)) + mapRolesValue("mapRoles", nodeEntry(karpenterARN, bothNodeGroups)))},
		// aws-iam-authenticator's aws-auth-crazy-case-top-keys.yaml: MaPrOlEs holds the node role, so
		// aws-auth-malformed denies it; the two other keys are warnings here.
		{name: "crazy-case-top-keys", fires: 2, in: awsAuth(mapRolesValue("MaPrOlEs", nodeEntry(karpenterARN, bothNodeGroups)) +
			"mApUsErS: |\n  - userarn: arn:aws:iam::111122223333:user/admin\n    username: admin\n    groups: [system:masters]\nMaPrCcOuNtS: |\n  - \"111122223333\"\n")},
		{name: "singular", fires: 1, in: awsAuth("mapUser: |\n  - userarn: arn:aws:iam::111122223333:user/admin\n    username: admin\n")},
		{name: "unrelated-key", fires: 1, in: awsAuth("notes: managed by terraform\n")},
	})
}
