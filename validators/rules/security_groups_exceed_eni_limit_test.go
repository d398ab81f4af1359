package rules_test

import (
	"fmt"
	"testing"
)

func TestSecurityGroupsExceedENILimit(t *testing.T) {
	many := func(n int) factsOpt {
		gs := defaultNetGroups()
		for i := 0; i < n-1; i++ {
			gs = append(gs, netGroup(fmt.Sprintf("sg-0f0f0f0f0f0f%05d", i), fmt.Sprintf("prod-eks-extra-%d", i), clusterVPC, "{karpenter.sh/discovery: prod-eks}", nil, allOut))
		}
		return groups(gs...)
	}
	quota := func(n string) factsOpt { return section("serviceQuotas", "serviceQuotas:\n  vpc/L-2AFB9258: "+n+"\n") }
	testRule(t, "security-groups-exceed-eni-limit", []ruleCase{
		{name: "five-groups-no-quota-needed", in: nodeClass("default", eksSpec), facts: netFacts(many(5))},
		{name: "six-groups-quota-raised", in: nodeClass("default", eksSpec), facts: netFacts(many(6), quota("8"))},
		{name: "six-groups-default-quota", fires: 1, in: nodeClass("default", eksSpec), facts: netFacts(many(6), quota("5"))},
		{name: "six-groups-quota-unknown", fires: 1, in: nodeClass("default", eksSpec), facts: netFacts(many(6))},
		{name: "quota-entry-missing-capped", fires: 1, in: nodeClass("default", eksSpec), facts: netFacts(many(7), section("serviceQuotas", "serviceQuotas: {}\n"))},
		{name: "groups-unknown", in: nodeClass("default", eksSpec), facts: netFacts(without("securityGroups")), notEvaluated: "not in the facts snapshot: securityGroups"},
	})
}
