package rules_test

import "testing"

func TestAWSAuthMalformed(t *testing.T) {
	testRule(t, "aws-auth-malformed", []ruleCase{
		{name: "good", in: awsAuth("mapRoles: |\n  ---\n  - rolearn: arn:aws:iam::111122223333:role/KarpenterNodeRole-prod\n    username: system:node:{{EC2PrivateDNSName}}\n    groups:\n      - system:bootstrappers\n      - system:nodes\nmapAccounts: |\n  - \"111122223333\"\n")},
		// aws-iam-authenticator's own fixtures load these: encoding/json matches keys in any case.
		{name: "keys-in-any-case", in: awsAuth("mapRoles: |\n  - roleARN: arn:aws:iam::111122223333:role/KarpenterNodeRole-prod\n    UserName: system:node:{{EC2PrivateDNSName}}\n    Groups:\n      - system:bootstrappers\n      - system:nodes\n  - rOlEaRn: arn:aws:iam::111122223333:role/admin\n    username: admin\n    groups: [system:masters]\n")},
		{name: "missing-username", fires: 1, in: awsAuth("mapRoles: |\n  - rolearn: arn:aws:iam::111122223333:role/a\n    username: system:node:{{EC2PrivateDNSName}}\n    groups: [system:bootstrappers, system:nodes]\n  - rolearn: arn:aws:iam::111122223333:role/b\n    usernmae: system:node:{{EC2PrivateDNSName}}\n    groups: [system:bootstrappers, system:nodes]\n")},
		{name: "bad-yaml", fires: 1, in: awsAuth("mapRoles: |\n  - rolearn: arn:aws:iam::111122223333:role/a\n     username: x\n    groups: [a\n")},
		{name: "groups-string", fires: 1, in: awsAuth("mapUsers: |\n  - userarn: arn:aws:iam::111122223333:user/ops\n    username: ops\n    groups: system:masters\n")},
		{name: "structure-not-string", fires: 1, in: awsAuth("mapRoles:\n  - rolearn: arn:aws:iam::111122223333:role/a\n    username: x\n")},
	})
}
