package rules_test

import "testing"

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
