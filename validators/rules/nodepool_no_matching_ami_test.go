package rules_test

import "testing"

func TestNodepoolNoMatchingAMI(t *testing.T) {
	arch := func(values string) string {
		return "- key: kubernetes.io/arch\n  operator: In\n  values: [" + values + "]\n"
	}
	x86Only := nodeClass("x86", amiTerms("amiFamily: AL2023\namiSelectorTerms:\n  - id: "+al2023x86+"\n"))
	windows := nodeClass("windows", windowsSpec(winRole))
	testRule(t, "nodepool-no-matching-ami", []ruleCase{
		{name: "alias-serves-both", in: docs(nodeClass("default", eksSpec), poolWith("arm", "default", arch("arm64"))), facts: clusterFacts()},
		// The alias's arm64 parameter resolves to an image the snapshot does not list: Karpenter would
		// launch it all the same.
		{name: "alias-parameter-without-image", in: docs(nodeClass("default", eksSpec), poolWith("arm", "default", arch("arm64"))), facts: clusterFacts(images(defaultImages()[0]))},
		{name: "x86-pool-x86-images", in: docs(x86Only, poolWith("x86", "x86", arch("amd64"))), facts: clusterFacts()},
		{name: "arm-pool-x86-images", fires: 1, in: docs(x86Only, poolWith("arm", "x86", arch("arm64"))), facts: clusterFacts()},
		{name: "arm-pool-windows", fires: 1, in: docs(windows, poolWith("arm", "windows", arch("arm64"))), facts: clusterFacts()},
		{name: "linux-pool-windows", fires: 1, in: docs(windows, poolWith("linux", "windows", "- key: kubernetes.io/os\n  operator: In\n  values: [linux]\n")), facts: clusterFacts()},
		// amiFamily wins over the alias, as Karpenter reads it: a Custom class launches Linux nodes.
		{name: "custom-family-over-windows-alias", in: docs(nodeClass("custom", amiTerms("amiFamily: Custom\namiSelectorTerms:\n  - alias: windows2022@latest\n")),
			poolWith("linux", "custom", "- key: kubernetes.io/os\n  operator: In\n  values: [linux]\n")), facts: clusterFacts()},
		{name: "images-unknown", in: docs(x86Only, poolWith("arm", "x86", arch("arm64"))), facts: clusterFacts(without("images")), notEvaluated: "not in the facts snapshot: images"},
	})
}
