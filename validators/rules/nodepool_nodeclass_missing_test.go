package rules_test

import (
	"strings"
	"testing"
)

func TestNodepoolNodeclassMissing(t *testing.T) {
	testRule(t, "nodepool-nodeclass-missing", []ruleCase{
		{name: "present", in: docs(nodePool("np", "default", ""), nodeClass("default", baseSpec))},
		{name: "other-provider", in: strings.Replace(nodePool("np", "x", ""), "kind: EC2NodeClass", "kind: AKSNodeClass", 1)},
		{name: "missing", fires: 1, in: docs(nodePool("np", "defualt", ""), nodeClass("default", baseSpec))},
	})
}
