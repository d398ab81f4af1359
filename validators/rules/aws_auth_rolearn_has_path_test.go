package rules_test

import "testing"

func TestAWSAuthRoleARNHasPath(t *testing.T) {
	platform := nodeClass("platform", withRole("role: "+teamRole+"\n"))
	pathed := withAWSAuth(mapping(oldNodesARN, nodeGroups), mapping(teamRoleARN, nodeGroups))
	testRule(t, "aws-auth-rolearn-has-path", []ruleCase{
		{name: "pathless", in: platform, facts: clusterFacts(mode("CONFIG_MAP"))},
		{name: "config-map-pathed-only", fires: 1, in: platform, facts: clusterFacts(mode("CONFIG_MAP"), pathed)},
		{name: "config-map-pathed-and-pathless", in: platform,
			facts: clusterFacts(mode("CONFIG_MAP"), withAWSAuth(mapping(teamRoleARN, nodeGroups), mapping(teamRolePathless, nodeGroups)))},
		{name: "hybrid-pathed-no-entry", fires: 1, in: platform, facts: clusterFacts(pathed, entries())},
		{name: "hybrid-pathed-via-profile", fires: 1, in: nodeClass("platform-profile", withRole("instanceProfile: PlatformNodeProfile\n")),
			facts: clusterFacts(pathed, entries(), profiles(profile("PlatformNodeProfile", teamRole)))},
		// The mapping does not matter when an access entry decides, or when the mode ignores aws-auth.
		{name: "hybrid-pathed-entry-wins", in: platform, facts: clusterFacts(pathed)},
		{name: "api-ignores-aws-auth", in: platform, facts: clusterFacts(mode("API"), pathed, entries())},
		{name: "role-without-path", in: nodeClass("default", eksSpec), facts: clusterFacts(mode("CONFIG_MAP"))},
		// Without the mode nothing says the mapping decides: never a deny on less than the rule needs.
		{name: "mode-unknown", in: platform, facts: clusterFacts(mode(""), pathed), notEvaluated: "cluster.authenticationMode"},
		{name: "aws-auth-unknown", in: platform, facts: clusterFacts(without("awsAuth")), notEvaluated: "not in the facts snapshot: awsAuth"},
		{name: "hybrid-entries-unknown", in: platform, facts: clusterFacts(pathed, without("accessEntries")), notEvaluated: "accessEntries"},
		{name: "no-facts", in: platform, notEvaluated: "no facts: awsAuth, roles"},
	})
}
