package rules_test

import "testing"

func TestAMISelectorNoMatch(t *testing.T) {
	testRule(t, "ami-selector-no-match", []ruleCase{
		{name: "al2023-latest", in: nodeClass("default", eksSpec), facts: clusterFacts()},
		{name: "al2023-pinned", in: nodeClass("pinned", amiTerms("amiSelectorTerms:\n  - alias: al2023@v20251112\n")), facts: clusterFacts()},
		{name: "bottlerocket-latest", in: nodeClass("bottlerocket", amiTerms("amiSelectorTerms:\n  - alias: bottlerocket@latest\n")), facts: clusterFacts()},
		{name: "windows2022-latest", in: nodeClass("windows", windowsSpec(winRole)), facts: clusterFacts()},
		{name: "al2-latest-on-1-32", in: nodeClass("al2", amiTerms("amiSelectorTerms:\n  - alias: al2@latest\n")), facts: clusterFacts(k8sVersion("1.32"))},
		{name: "name-owner", in: nodeClass("by-name", amiTerms("amiFamily: AL2023\namiSelectorTerms:\n  - name: amazon-eks-node-al2023-*-standard-1.33-v2025*\n    owner: amazon\n")), facts: clusterFacts()},
		{name: "id", in: nodeClass("by-id", amiTerms("amiFamily: AL2023\namiSelectorTerms:\n  - id: "+al2023x86+"\n")), facts: clusterFacts()},
		{name: "tags-self", in: nodeClass("team", amiTerms("amiFamily: AL2023\namiSelectorTerms:\n  - tags:\n      team: platform\n    owner: self\n")), facts: clusterFacts()},
		{name: "ssm-parameter", in: nodeClass("ssm", amiTerms("amiFamily: AL2023\namiSelectorTerms:\n  - ssmParameter: /aws/service/eks/optimized-ami/1.33/amazon-linux-2023/arm64/standard/recommended/image_id\n")), facts: clusterFacts()},
		{name: "al2023-version-not-published", fires: 1, in: nodeClass("pinned", amiTerms("amiSelectorTerms:\n  - alias: al2023@v20240101\n")), facts: clusterFacts()},
		{name: "al2-latest-on-1-33", fires: 1, in: nodeClass("al2", amiTerms("amiSelectorTerms:\n  - alias: al2@latest\n")), facts: clusterFacts()},
		{name: "name-typo", fires: 1, in: nodeClass("by-name", amiTerms("amiFamily: AL2023\namiSelectorTerms:\n  - name: amazon-eks-node-al2023-x86-64-standard-1.33-*\n    owner: amazon\n")), facts: clusterFacts()},
		{name: "name-wrong-owner", fires: 1, in: nodeClass("by-name", amiTerms("amiFamily: AL2023\namiSelectorTerms:\n  - name: platform-team-base-*\n    owner: amazon\n")), facts: clusterFacts()},
		{name: "id-pending-only", fires: 1, in: nodeClass("by-id", amiTerms("amiFamily: AL2023\namiSelectorTerms:\n  - id: "+teamPending+"\n")), facts: clusterFacts()},
		{name: "one-of-two-terms", fires: 1, in: nodeClass("two-terms", amiTerms("amiFamily: AL2023\namiSelectorTerms:\n  - tags:\n      team: platform\n      stage: prod\n  - id: "+al2023x86+"\n")), facts: clusterFacts()},
		{name: "ssm-parameter-missing", fires: 1, in: nodeClass("ssm", amiTerms("amiFamily: AL2023\namiSelectorTerms:\n  - ssmParameter: /platform/amis/al2023/latest\n")), facts: clusterFacts()},
		{name: "no-images", fires: 1, in: nodeClass("default", eksSpec), facts: clusterFacts(images())},
		// A name term needs no SSM parameters nor the cluster's version.
		{name: "name-without-ssm", in: nodeClass("by-name", amiTerms("amiFamily: AL2023\namiSelectorTerms:\n  - name: amazon-eks-node-al2023-*\n    owner: amazon\n")), facts: clusterFacts(without("ssmParameters"), k8sVersion(""))},
		{name: "images-unknown", in: nodeClass("default", eksSpec), facts: clusterFacts(without("images")), notEvaluated: "not in the facts snapshot: images"},
		{name: "alias-ssm-unknown", in: nodeClass("default", eksSpec), facts: clusterFacts(without("ssmParameters")), notEvaluated: "ssmParameters"},
		{name: "alias-version-unknown", in: nodeClass("default", eksSpec), facts: clusterFacts(k8sVersion("")), notEvaluated: "cluster.version"},
		// Owner self (implied by a name term without owner) needs the cluster's account.
		{name: "self-account-unknown", in: nodeClass("team", amiTerms("amiFamily: AL2023\namiSelectorTerms:\n  - name: platform-team-base-*\n")), facts: clusterFacts(clusterField("accountID", "")), notEvaluated: "cluster.accountID"},
		{name: "no-facts", in: nodeClass("default", eksSpec), notEvaluated: "no facts: images"},
	})
}
