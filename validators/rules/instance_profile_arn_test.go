package rules_test

import (
	"strings"
	"testing"
)

func TestInstanceProfileARN(t *testing.T) {
	spec := strings.Replace(baseSpec, "role: KarpenterNodeRole-prod\n", "", 1)
	testRule(t, "instance-profile-arn", []ruleCase{
		{name: "name-is-fine", in: nodeClass("ok", spec+"instanceProfile: KarpenterNodeInstanceProfile-prod\n")},
		{name: "role-only", in: nodeClass("role", baseSpec)},
		{name: "arn", fires: 1, in: nodeClass("arn", spec+"instanceProfile: arn:aws:iam::111122223333:instance-profile/KarpenterNodeInstanceProfile-prod # from terraform\n")},
		{name: "arn-with-path-quoted", fires: 1, in: nodeClass("pathed", spec+"instanceProfile: \"arn:aws-us-gov:iam::111122223333:instance-profile/team/nodes/Profile\"\n")},
	})
}
