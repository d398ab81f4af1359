package validators_test

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

func TestStaleCompatibilityAnnotation(t *testing.T) {
	classWith := func(name, ann string) string {
		return strings.Replace(nodeClass(name, baseSpec), "  name: "+name+"\n", "  name: "+name+"\n  annotations:\n"+indent(ann, "    "), 1)
	}
	testRule(t, "stale-compatibility-annotation", []ruleCase{
		{name: "karpenter-owned", in: classWith("owned", "compatibility.karpenter.k8s.aws/cluster-name-tagged: \"true\"\ncompatibility.karpenter.k8s.aws/kubelet-drift-hash: \"123\"\n")},
		{name: "alias-version", fires: 1, in: classWith("alias", "compatibility.karpenter.k8s.aws/v1-alias-version: \"1\"\nteam: platform\n")},
		{name: "only-annotation", fires: 1, in: classWith("only", "compatibility.karpenter.k8s.aws/v1beta1-ubuntu: \"true\"\n")},
		{name: "nodepool-kubelet-conversion", fires: 2, in: docs(strings.Replace(nodePool("np", "c", ""), "  name: np\n", "  name: np\n  annotations:\n    compatibility.karpenter.sh/v1beta1-kubelet-conversion: '{\"maxPods\":110}'\n    compatibility.karpenter.sh/v1beta1-nodeclass-reference: '{\"name\":\"c\"}'\n", 1), nodeClass("c", baseSpec))},
	})
}
