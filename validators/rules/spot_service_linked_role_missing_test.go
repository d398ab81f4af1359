package rules_test

import (
	"strings"
	"testing"
)

func TestSpotServiceLinkedRoleMissing(t *testing.T) {
	noSpotRole := roles(role(nodeRole, "/", "2025-05-30T09:00:00Z"), role("PlatformAdmin", "/", "2024-01-10T12:00:00Z"))
	spot := "- key: karpenter.sh/capacity-type\n  operator: In\n  values: [\"spot\", \"on-demand\"]\n"
	testRule(t, "spot-service-linked-role-missing", []ruleCase{
		{name: "spot-role-exists", in: capacityPool("spot", spot), facts: clusterFacts()},
		{name: "on-demand-only", in: capacityPool("on-demand", "- key: karpenter.sh/capacity-type\n  operator: In\n  values: [\"on-demand\"]\n"), facts: clusterFacts(noSpotRole)},
		{name: "does-not-exist", in: capacityPool("no-capacity", "- key: karpenter.sh/capacity-type\n  operator: DoesNotExist\n"), facts: clusterFacts(noSpotRole)},
		{name: "spot-then-excluded", in: capacityPool("excluded", spot+"- key: karpenter.sh/capacity-type\n  operator: NotIn\n  values: [\"spot\"]\n"), facts: clusterFacts(noSpotRole)},
		{name: "not-in-spot", in: capacityPool("no-spot", "- key: karpenter.sh/capacity-type\n  operator: NotIn\n  values: [\"spot\"]\n"), facts: clusterFacts(noSpotRole)},
		{name: "spot-in", fires: 1, in: capacityPool("spot", spot), facts: clusterFacts(noSpotRole)},
		{name: "not-in-on-demand", fires: 1, in: capacityPool("spot-only", "- key: karpenter.sh/capacity-type\n  operator: NotIn\n  values: [\"on-demand\"]\n"), facts: clusterFacts(noSpotRole)},
		// Without a capacity-type requirement Karpenter allows, and prefers, spot.
		{name: "no-capacity-requirement", fires: 1, in: capacityPool("default-capacity", ""), facts: clusterFacts(noSpotRole)},
		{name: "no-requirements-at-all", fires: 1, in: strings.Replace(capacityPool("bare", ""),
			"      requirements:\n        - key: kubernetes.io/arch\n          operator: In\n          values: [\"amd64\"]\n", "", 1), facts: clusterFacts(noSpotRole)},
		{name: "exists", fires: 1, in: capacityPool("any-capacity", "- key: karpenter.sh/capacity-type\n  operator: Exists\n"), facts: clusterFacts(noSpotRole)},
		{name: "no-roles-at-all", fires: 1, in: capacityPool("spot", spot), facts: clusterFacts(roles())},
		{name: "roles-unknown", in: capacityPool("spot", spot), facts: clusterFacts(without("roles")), notEvaluated: "not in the facts snapshot: roles"},
		{name: "no-facts", in: capacityPool("spot", spot), notEvaluated: "no facts: roles"},
	})
}
