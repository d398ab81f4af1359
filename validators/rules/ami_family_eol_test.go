package rules_test

import "testing"

func TestAMIFamilyEOL(t *testing.T) {
	testRule(t, "ami-family-eol", []ruleCase{
		{name: "al2023-alias", in: nodeClass("default", eksSpec), facts: clusterFacts()},
		{name: "windows2022-alias", in: nodeClass("windows", windowsSpec(winRole)), facts: clusterFacts()},
		{name: "al2-on-1-32", in: nodeClass("al2", amiTerms("amiSelectorTerms:\n  - alias: al2@latest\n")), facts: clusterFacts(k8sVersion("1.32"))},
		{name: "al2-family-on-1-32", in: nodeClass("al2", amiTerms("amiFamily: AL2\namiSelectorTerms:\n  - name: amazon-eks-node-1.32-*\n    owner: amazon\n")), facts: clusterFacts(k8sVersion("1.32"))},
		{name: "windows2025-on-1-35", in: nodeClass("windows", amiTerms("amiSelectorTerms:\n  - alias: windows2025@latest\n")), facts: clusterFacts(k8sVersion("1.35"))},
		// An alias needs no image facts to be judged.
		{name: "al2023-alias-images-unknown", in: nodeClass("default", eksSpec), facts: clusterFacts(without("images"))},
		{name: "al2-alias", fires: 1, in: nodeClass("al2", amiTerms("amiSelectorTerms:\n  - alias: al2@latest\n")), facts: clusterFacts()},
		{name: "al2-family", fires: 1, in: nodeClass("al2", amiTerms("amiFamily: AL2\namiSelectorTerms:\n  - name: amazon-eks-node-1.32-*\n    owner: amazon\n")), facts: clusterFacts()},
		{name: "al2-family-images-unknown", fires: 1, in: nodeClass("al2", amiTerms("amiFamily: AL2\namiSelectorTerms:\n  - name: amazon-eks-node-1.32-*\n    owner: amazon\n")), facts: clusterFacts(without("images"))},
		{name: "al2-image-by-name", fires: 1, in: nodeClass("al2023", amiTerms("amiFamily: AL2023\namiSelectorTerms:\n  - name: amazon-eks-node-1.32-*\n    owner: amazon\n")), facts: clusterFacts()},
		{name: "al2-image-by-id-custom", fires: 1, in: nodeClass("custom", amiTerms("amiFamily: Custom\namiSelectorTerms:\n  - id: "+al2x86+"\n")), facts: clusterFacts(k8sVersion("1.34"))},
		{name: "windows2025-on-1-33", fires: 1, in: nodeClass("windows", amiTerms("amiSelectorTerms:\n  - alias: windows2025@latest\n")), facts: clusterFacts()},
		{name: "version-unknown", in: nodeClass("al2", amiTerms("amiSelectorTerms:\n  - alias: al2@latest\n")), facts: clusterFacts(k8sVersion("")), notEvaluated: "not in the facts snapshot: cluster.version"},
		{name: "image-by-name-images-unknown", in: nodeClass("al2023", amiTerms("amiFamily: AL2023\namiSelectorTerms:\n  - name: amazon-eks-node-1.32-*\n    owner: amazon\n")), facts: clusterFacts(without("images")), notEvaluated: "images"},
		{name: "no-facts", in: nodeClass("al2", amiTerms("amiSelectorTerms:\n  - alias: al2@latest\n")), notEvaluated: "no facts: cluster.version"},
	})
}
