package rules_test

import (
	"strings"
	"testing"
)

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
