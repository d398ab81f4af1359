package validators_test

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

func TestNodepoolNoLimits(t *testing.T) {
	noLimits := strings.Replace(nodePool("unbounded", "c", ""), "  limits:\n    cpu: \"100\"\n", "", 1)
	testRule(t, "nodepool-no-limits", []ruleCase{
		{name: "limits", in: docs(nodePool("bounded", "c", ""), nodeClass("c", baseSpec))},
		{name: "no-limits", fires: 1, in: docs(noLimits, nodeClass("c", baseSpec))},
		{name: "empty-limits", fires: 1, in: docs(strings.Replace(noLimits, "spec:\n  template", "spec:\n  limits: {}\n  template", 1), nodeClass("c", baseSpec))},
	})
}
