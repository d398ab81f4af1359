package rules_test

import (
	"strings"
	"testing"
)

func TestNodepoolNoLimits(t *testing.T) {
	noLimits := strings.Replace(nodePool("unbounded", "c", ""), "  limits:\n    cpu: \"100\"\n", "", 1)
	testRule(t, "nodepool-no-limits", []ruleCase{
		{name: "limits", in: docs(nodePool("bounded", "c", ""), nodeClass("c", baseSpec))},
		{name: "no-limits", fires: 1, in: docs(noLimits, nodeClass("c", baseSpec))},
		{name: "empty-limits", fires: 1, in: docs(strings.Replace(noLimits, "spec:\n  template", "spec:\n  limits: {}\n  template", 1), nodeClass("c", baseSpec))},
	})
}
