package rules_test

import "testing"

func TestAMIFamilyMismatch(t *testing.T) {
	testRule(t, "ami-family-mismatch", []ruleCase{
		{name: "alias-only", in: nodeClass("default", eksSpec), facts: clusterFacts()},
		{name: "al2023-image", in: nodeClass("al2023", amiTerms("amiFamily: AL2023\namiSelectorTerms:\n  - id: "+al2023x86+"\n")), facts: clusterFacts()},
		{name: "windows-image", in: nodeClass("windows", amiTerms("amiFamily: Windows2022\namiSelectorTerms:\n  - name: Windows_Server-2022-English-Core-EKS_Optimized-1.33-*\n    owner: amazon\n")), facts: clusterFacts()},
		// Each Windows family boots its own release: a 2019 image under Windows2022 gets the wrong bootstrap.
		{name: "windows-release-mismatch", fires: 1, in: nodeClass("windows-2019", amiTerms("amiFamily: Windows2022\namiSelectorTerms:\n  - name: Windows_Server-2019-English-Core-EKS_Optimized-1.33-*\n    owner: amazon\n")), facts: clusterFacts(images(append(defaultImages(), image("ami-0win2019", "Windows_Server-2019-English-Core-EKS_Optimized-1.33-2025.11.12", winOwner, "amazon", "x86_64", "available", ""))...))},
		{name: "bottlerocket-image", in: nodeClass("bottlerocket", amiTerms("amiFamily: Bottlerocket\namiSelectorTerms:\n  - name: bottlerocket-aws-k8s-1.33-*\n    owner: amazon\n")), facts: clusterFacts()},
		{name: "custom-any-image", in: nodeClass("custom", amiTerms("amiFamily: Custom\namiSelectorTerms:\n  - id: "+al2x86+"\n")), facts: clusterFacts()},
		{name: "own-image-unknown-family", in: nodeClass("team", amiTerms("amiFamily: AL2023\namiSelectorTerms:\n  - tags:\n      team: platform\n")), facts: clusterFacts()},
		{name: "al2-image-under-al2023", fires: 1, in: nodeClass("al2023", amiTerms("amiFamily: AL2023\namiSelectorTerms:\n  - name: amazon-eks-node-1.32-*\n    owner: amazon\n")), facts: clusterFacts()},
		{name: "bottlerocket-under-al2023", fires: 1, in: nodeClass("al2023", amiTerms("amiFamily: AL2023\namiSelectorTerms:\n  - id: "+brX86+"\n")), facts: clusterFacts()},
		{name: "al2023-under-bottlerocket", fires: 1, in: nodeClass("bottlerocket", amiTerms("amiFamily: Bottlerocket\namiSelectorTerms:\n  - name: amazon-eks-node-al2023-*\n    owner: amazon\n")), facts: clusterFacts()},
		{name: "windows-under-al2023", fires: 1, in: nodeClass("al2023", amiTerms("amiFamily: AL2023\namiSelectorTerms:\n  - id: "+win2022+"\n")), facts: clusterFacts()},
		{name: "two-terms-one-wrong", fires: 1, in: nodeClass("al2023", amiTerms("amiFamily: AL2023\namiSelectorTerms:\n  - id: "+al2023x86+"\n  - id: "+al2x86+"\n")), facts: clusterFacts()},
		{name: "images-unknown", in: nodeClass("al2023", amiTerms("amiFamily: AL2023\namiSelectorTerms:\n  - id: "+al2x86+"\n")), facts: clusterFacts(without("images")), notEvaluated: "not in the facts snapshot: images"},
		{name: "ssm-term-ssm-unknown", in: nodeClass("ssm", amiTerms("amiFamily: AL2023\namiSelectorTerms:\n  - ssmParameter: /aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/recommended/image_id\n")), facts: clusterFacts(without("ssmParameters")), notEvaluated: "ssmParameters"},
		{name: "no-facts", in: nodeClass("al2023", amiTerms("amiFamily: AL2023\namiSelectorTerms:\n  - id: "+al2x86+"\n")), notEvaluated: "no facts: images"},
	})
}
