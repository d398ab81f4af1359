package rules_test

import "testing"

func TestAWSAuthGroupsMisread(t *testing.T) {
	admin := func(groups string) string {
		return awsAuth(mapRolesValue("mapRoles", nodeEntry(karpenterARN, bothNodeGroups), "- rolearn: arn:aws:iam::111122223333:role/admin\n  username: admin\n"+groups))
	}
	testRule(t, "aws-auth-groups-misread", []ruleCase{
		{name: "good", in: admin("  groups:\n    - system:masters\n    - platform\n")},
		{name: "list-item-indented-under-the-one-before", fires: 1, in: admin("  groups:\n    - system:masters\n     - platform\n")},
		{name: "groups-string", fires: 1, in: awsAuth("mapUsers: |\n  - userarn: arn:aws:iam::111122223333:user/ops\n    username: ops\n    groups: system:masters\n")},
		{name: "flow-list-quoted", fires: 1, in: admin("  groups: [\"system:masters, platform\"]\n")},
		{name: "yaml-1.1-boolean", fires: 1, in: admin("  groups: [platform, y]\n")},
		{name: "misspelt-key", fires: 1, in: admin("  group: [system:masters]\n")},
		// A node role's glued groups stop its nodes joining: aws-auth-malformed denies it.
		{name: "node-groups-glued", in: awsAuth(mapRolesValue("mapRoles", nodeEntry(karpenterARN, gluedNodeGroups)))},
	})
}
