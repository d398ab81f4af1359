package rules_test

import (
	"strings"
	"testing"
)

func TestKarpenterCrdInvalid(t *testing.T) {
	class := nodeClass("default", baseSpec)
	// What --fix used to write for a WhenUnderutilized v1beta1 pool: a disruption block without
	// consolidateAfter, which v1 requires (its default applies only to an absent disruption).
	noConsolidateAfter := nodePool("no-consolidate-after", "default", "disruption:\n  consolidationPolicy: WhenEmptyOrUnderutilized\n")
	nullConsolidateAfter := nodePool("null-consolidate-after", "default", "disruption:\n  consolidationPolicy: WhenEmptyOrUnderutilized\n  consolidateAfter: null\n")
	testRule(t, "karpenter-crd-invalid", []ruleCase{
		{name: "valid", in: docs(class, nodePool("default", "default", ""))},
		{name: "role-and-instance-profile", fires: 1, in: nodeClass("both", baseSpec+"instanceProfile: KarpenterNodeInstanceProfile\n")},
		{name: "neither-role-nor-instance-profile", fires: 1, in: nodeClass("neither", strings.Replace(baseSpec, "role: KarpenterNodeRole-prod\n", "", 1))},
		{name: "security-group-terms-null", fires: 1, in: nodeClass("sg-null", strings.Replace(baseSpec, "securityGroupSelectorTerms:\n  - tags:\n      karpenter.sh/discovery: prod\n", "securityGroupSelectorTerms: null\n", 1))},
		{name: "missing-nodeclassref", fires: 1, in: strings.Replace(nodePool("no-ref", "default", ""), "      nodeClassRef:\n        group: karpenter.k8s.aws\n        kind: EC2NodeClass\n        name: default\n", "", 1)},
		{name: "requirement-without-operator", fires: 1, in: strings.Replace(nodePool("no-operator", "default", ""), "          operator: In\n", "", 1)},
		{name: "disruption-without-consolidate-after", fires: 1, in: docs(class, noConsolidateAfter)},
		{name: "consolidate-after-null", fires: 1, in: docs(class, nullConsolidateAfter)},
		{name: "unknown-field", fires: 1, in: nodeClass("typo", baseSpec+"amiSelectorTerm:\n  - alias: al2023@latest\n")},
		{name: "kubelet-container-runtime", fires: 1, in: nodeClass("runtime", baseSpec+"kubelet:\n  maxPods: 110\n  containerRuntime: containerd\n")},
		{name: "alias-pattern", fires: 1, in: nodeClass("alias", strings.Replace(baseSpec, "al2023@v20251112", "al2023", 1))},
		{name: "nodeclassref-group-with-version", fires: 1, in: strings.Replace(nodePool("group-version", "default", ""), "group: karpenter.k8s.aws", "group: karpenter.k8s.aws/v1", 1)},
		{name: "kubelet-moved-explained-by-migration-rule", fires: 0, in: docs(class, strings.Replace(nodePool("tmpl-kubelet", "default", ""), "      requirements:", "      kubelet:\n        maxPods: 110\n      requirements:", 1))},
		{name: "v1beta1-not-served", fires: 0, in: strings.Replace(nodePool("old", "default", ""), "karpenter.sh/v1\n", "karpenter.sh/v1beta1\n", 1)},
		{name: "yaml-1.1-boolean-as-kubectl-reads-it", fires: 0, in: nodeClass("monitoring", baseSpec+"detailedMonitoring: yes\n")},
		// Flux substitutes ${VAR} before applying: a value the schema refuses as written warns.
		{name: "flux-variable-in-a-quantity", fires: 1, in: nodeClass("flux", baseSpec+"blockDeviceMappings:\n  - deviceName: /dev/xvda\n    ebs:\n      volumeSize: ${flux_karpenter_node_volume_size}\n      volumeType: gp3\n")},
		{name: "flux-variable-where-any-string-goes", fires: 0, in: nodeClass("flux-tag", baseSpec+"tags:\n  environment: ${cluster_env}\n")},
	})
}
