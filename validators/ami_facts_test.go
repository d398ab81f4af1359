package validators_test

import "testing"

// amiTerms is eksSpec with its amiSelectorTerms block (amiFamily included) replaced.
func amiTerms(block string) string { return withAMI(block) }

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

func TestAMIOwnerNotAllowed(t *testing.T) {
	amazonOnly := "apiVersion: karpenter-guard.io/v1alpha1\nkind: GuardConfig\namiOwners:\n  allowed: [amazon]\n"
	amazonAndSelf := "apiVersion: karpenter-guard.io/v1alpha1\nkind: GuardConfig\namiOwners:\n  allowed: [amazon, self]\n"
	byEKSAccount := "apiVersion: karpenter-guard.io/v1alpha1\nkind: GuardConfig\namiOwners:\n  allowed: [\"602401143452\"]\n"
	eksName := amiTerms("amiFamily: AL2023\namiSelectorTerms:\n  - name: amazon-eks-node-al2023-x86_64-standard-1.33-*\n")
	testRule(t, "ami-owner-not-allowed", []ruleCase{
		{name: "alias", cfg: amazonOnly, in: nodeClass("default", eksSpec), facts: clusterFacts()},
		{name: "windows-alias", cfg: amazonOnly, in: nodeClass("windows", windowsSpec(winRole)), facts: clusterFacts()},
		{name: "name-owner-amazon", cfg: amazonOnly, in: nodeClass("by-name", amiTerms("amiFamily: AL2023\namiSelectorTerms:\n  - name: amazon-eks-node-al2023-x86_64-standard-1.33-*\n    owner: amazon\n")), facts: clusterFacts()},
		{name: "look-alike-self-allowed", cfg: amazonAndSelf, in: nodeClass("by-name", eksName), facts: clusterFacts()},
		{name: "account-id-allowed", cfg: byEKSAccount, in: nodeClass("default", eksSpec), facts: clusterFacts()},
		{name: "allowlist-empty-rule-off", in: nodeClass("vendor", amiTerms("amiFamily: AL2023\namiSelectorTerms:\n  - tags:\n      vendor: cis\n")), facts: clusterFacts()},
		{name: "look-alike-picked", fires: 1, cfg: amazonOnly, in: nodeClass("by-name", eksName), facts: clusterFacts()},
		{name: "vendor-image", fires: 1, cfg: amazonAndSelf, in: nodeClass("vendor", amiTerms("amiFamily: AL2023\namiSelectorTerms:\n  - tags:\n      vendor: cis\n")), facts: clusterFacts()},
		{name: "windows-not-from-eks-account", fires: 1, cfg: byEKSAccount, in: nodeClass("windows", windowsSpec(winRole)), facts: clusterFacts()},
		{name: "images-unknown", cfg: amazonOnly, in: nodeClass("by-name", eksName), facts: clusterFacts(without("images")), notEvaluated: "not in the facts snapshot: images"},
		{name: "alias-ssm-unknown", cfg: amazonOnly, in: nodeClass("default", eksSpec), facts: clusterFacts(without("ssmParameters")), notEvaluated: "ssmParameters"},
		{name: "self-allowed-account-unknown", cfg: amazonAndSelf, in: nodeClass("team", amiTerms("amiFamily: AL2023\namiSelectorTerms:\n  - tags:\n      team: platform\n    owner: \"111122223333\"\n")),
			facts: clusterFacts(clusterField("accountID", "")), notEvaluated: "cluster.accountID"},
		{name: "no-facts", cfg: amazonOnly, in: nodeClass("default", eksSpec), notEvaluated: "no facts: images"},
	})
}

func TestAMIFamilyMismatch(t *testing.T) {
	testRule(t, "ami-family-mismatch", []ruleCase{
		{name: "alias-only", in: nodeClass("default", eksSpec), facts: clusterFacts()},
		{name: "al2023-image", in: nodeClass("al2023", amiTerms("amiFamily: AL2023\namiSelectorTerms:\n  - id: "+al2023x86+"\n")), facts: clusterFacts()},
		{name: "windows-image", in: nodeClass("windows", amiTerms("amiFamily: Windows2022\namiSelectorTerms:\n  - name: Windows_Server-2022-English-Core-EKS_Optimized-1.33-*\n    owner: amazon\n")), facts: clusterFacts()},
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
