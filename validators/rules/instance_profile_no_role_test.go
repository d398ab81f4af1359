package rules_test

import "testing"

func TestInstanceProfileNoRole(t *testing.T) {
	testRule(t, "instance-profile-no-role", []ruleCase{
		{name: "holds-role", in: nodeClass("profile", withRole("instanceProfile: "+nodeProfile+"\n")), facts: clusterFacts()},
		{name: "empty", fires: 1, in: nodeClass("staging", withRole("instanceProfile: "+emptyProfile+"\n")), facts: clusterFacts()},
		{name: "empty-by-arn", fires: 1, in: nodeClass("staging-arn", withRole("instanceProfile: arn:aws:iam::111122223333:instance-profile/"+emptyProfile+"\n")), facts: clusterFacts()},
		{name: "missing", in: nodeClass("typo", withRole("instanceProfile: KarpenterNodeInstanceProfile-prod\n")), facts: clusterFacts()},
		{name: "role-spec", in: nodeClass("default", eksSpec), facts: clusterFacts()},
		{name: "profiles-unknown", in: nodeClass("staging", withRole("instanceProfile: "+emptyProfile+"\n")), facts: clusterFacts(without("instanceProfiles")), notEvaluated: "instanceProfiles"},
		{name: "no-facts", in: nodeClass("staging", withRole("instanceProfile: "+emptyProfile+"\n")), notEvaluated: "no facts: instanceProfiles"},
	})
}
