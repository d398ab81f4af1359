package rules_test

import "testing"

func TestNodeRoleAccessEntryStale(t *testing.T) {
	recreated := roles(role(nodeRole, "/", roleRecreated), role(teamRole, "/teams/platform/", roleRecreated))
	testRule(t, "node-role-access-entry-stale", []ruleCase{
		{name: "entry-after-role", in: nodeClass("default", eksSpec), facts: clusterFacts()},
		{name: "role-recreated", fires: 1, in: nodeClass("default", eksSpec), facts: clusterFacts(recreated)},
		{name: "role-recreated-api", fires: 1, in: nodeClass("platform", withRole("role: "+teamRole+"\n")), facts: clusterFacts(recreated, mode("API"))},
		{name: "config-map-ignores-entries", in: nodeClass("default", eksSpec), facts: clusterFacts(recreated, mode("CONFIG_MAP"))},
		{name: "role-without-create-date", in: nodeClass("default", eksSpec), facts: clusterFacts(roles(role(nodeRole, "/", "")))},
		{name: "no-entry", in: nodeClass("default", eksSpec), facts: clusterFacts(recreated, entries())},
		{name: "entries-unknown", in: nodeClass("default", eksSpec), facts: clusterFacts(recreated, without("accessEntries")), notEvaluated: "accessEntries"},
		{name: "roles-unknown", in: nodeClass("default", eksSpec), facts: clusterFacts(without("roles")), notEvaluated: "roles"},
	})
}
