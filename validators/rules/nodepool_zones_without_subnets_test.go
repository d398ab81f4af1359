package rules_test

import (
	"strings"
	"testing"
)

func TestNodepoolZonesWithoutSubnets(t *testing.T) {
	zone := func(op, values string) string {
		return "- key: topology.kubernetes.io/zone\n  operator: " + op + "\n  values: [" + values + "]\n"
	}
	zoneID := "- key: topology.k8s.aws/zone-id\n  operator: In\n  values: [use1-az6]\n"
	class := nodeClass("default", eksSpec)
	testRule(t, "nodepool-zones-without-subnets", []ruleCase{
		{name: "no-zone-requirement", in: docs(class, nodePool("general", "default", "")), facts: netFacts()},
		{name: "one-zone-of-the-class", in: docs(class, poolWith("general", "default", zone("In", "us-east-1a, us-east-1c"))), facts: netFacts()},
		{name: "zone-id-of-the-class", in: docs(class, poolWith("general", "default", "- key: topology.k8s.aws/zone-id\n  operator: In\n  values: [use1-az2]\n")), facts: netFacts()},
		{name: "zone-without-subnets", fires: 1, in: docs(class, poolWith("general", "default", zone("In", "us-east-1c, us-east-1d"))), facts: netFacts()},
		{name: "every-zone-excluded", fires: 1, in: docs(class, poolWith("general", "default", zone("NotIn", "us-east-1a, us-east-1b"))), facts: netFacts()},
		{name: "template-label-zone", fires: 1, in: docs(class, strings.Replace(nodePool("general", "default", ""), "  template:\n", "  template:\n    metadata:\n      labels:\n        failure-domain.beta.kubernetes.io/zone: us-east-1d\n", 1)), facts: netFacts()},
		{name: "zone-id-without-subnets", fires: 1, in: docs(class, poolWith("general", "default", zoneID)), facts: netFacts()},
		{name: "zone-id-unknown", in: docs(class, poolWith("general", "default", zoneID)), facts: clusterFacts()},
		{name: "subnets-unknown", in: docs(class, poolWith("general", "default", zone("In", "us-east-1c"))), facts: netFacts(without("subnets")), notEvaluated: "not in the facts snapshot: subnets"},
	})
}
