package rules_test

import "testing"

func TestInstanceProfileNotFound(t *testing.T) {
	testRule(t, "instance-profile-not-found", []ruleCase{
		{name: "exists", in: nodeClass("profile", withRole("instanceProfile: "+nodeProfile+"\n")), facts: clusterFacts()},
		{name: "role-spec", in: nodeClass("default", eksSpec), facts: clusterFacts(profiles())},
		// instance-profile-arn reports the ARN; the profile it names exists.
		{name: "arn-of-existing", in: nodeClass("arn", withRole("instanceProfile: arn:aws:iam::111122223333:instance-profile/"+nodeProfile+"\n")), facts: clusterFacts()},
		{name: "missing", fires: 1, in: nodeClass("typo", withRole("instanceProfile: KarpenterNodeInstanceProfile-prod\n")), facts: clusterFacts()},
		{name: "role-name-as-profile", fires: 1, in: nodeClass("role-as-profile", withRole("instanceProfile: "+nodeRole+"\n")), facts: clusterFacts()},
		{name: "role-name-as-profile-roles-unknown", fires: 1, in: nodeClass("role-as-profile", withRole("instanceProfile: "+nodeRole+"\n")), facts: clusterFacts(without("roles"))},
		{name: "no-profiles", fires: 1, in: nodeClass("profile", withRole("instanceProfile: "+nodeProfile+"\n")), facts: clusterFacts(profiles())},
		{name: "profiles-unknown", in: nodeClass("profile", withRole("instanceProfile: "+nodeProfile+"\n")), facts: clusterFacts(without("instanceProfiles")), notEvaluated: "not in the facts snapshot: instanceProfiles"},
		{name: "no-facts", in: nodeClass("profile", withRole("instanceProfile: "+nodeProfile+"\n")), notEvaluated: "no facts: instanceProfiles"},
	})
}
