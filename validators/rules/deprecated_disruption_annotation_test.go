package rules_test

import (
	"strings"
	"testing"
)

func TestDeprecatedDisruptionAnnotation(t *testing.T) {
	withAnn := func(name, ann string) string {
		return strings.Replace(nodePool(name, "c", ""), "  template:\n", "  template:\n    metadata:\n      annotations:\n"+indent(ann, "        "), 1)
	}
	class := nodeClass("c", baseSpec)
	testRule(t, "deprecated-disruption-annotation", []ruleCase{
		{name: "do-not-disrupt", in: docs(withAnn("ok", "karpenter.sh/do-not-disrupt: \"true\"\n"), class)},
		{name: "do-not-evict", fires: 1, in: docs(withAnn("evict", "team: data\nkarpenter.sh/do-not-evict: \"true\" # legacy\n"), class)},
		{name: "both-deprecated", fires: 2, in: docs(withAnn("both", "karpenter.sh/do-not-consolidate: \"true\"\nkarpenter.sh/do-not-evict: 'true'\n"), class)},
		{name: "already-has-new", fires: 1, in: docs(withAnn("new", "karpenter.sh/do-not-disrupt: \"true\"\nkarpenter.sh/do-not-evict: \"true\"\n"), class)},
	})
}
