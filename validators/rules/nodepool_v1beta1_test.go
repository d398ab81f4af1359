package rules_test

import (
	"strings"
	"testing"
)

const v1beta1NodePool = `apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata:
  name: default
spec:
  template:
    spec:
      nodeClassRef:
        apiVersion: karpenter.k8s.aws/v1beta1
        kind: EC2NodeClass
        name: default
      kubelet:
        maxPods: 110   # dense nodes
        systemReserved:
          cpu: 100m
      resources:
        cpu: "1"
      requirements:
        - key: karpenter.sh/capacity-type
          operator: In
          values: ["on-demand"]
  limits:
    cpu: "100"
  disruption:
    consolidationPolicy: WhenUnderutilized
    expireAfter: 720h

    # budgets stay as they are
    budgets:
      - nodes: "10%"
`

func TestNodepoolV1beta1(t *testing.T) {
	v1Class := nodeClass("default", baseSpec)
	sharedDifferent := strings.NewReplacer("name: default\nspec:", "name: other\nspec:", "maxPods: 110", "maxPods: 50").Replace(v1beta1NodePool)
	testRule(t, "nodepool-v1beta1", []ruleCase{
		{name: "v1", in: docs(nodePool("v1", "default", ""), v1Class)},
		{name: "full-conversion", fires: 6, in: docs(v1beta1NodePool, v1Class)},
		{name: "kubelet-class-not-in-input", fires: 6, in: v1beta1NodePool},
		{name: "kubelet-shared-with-different-settings", fires: 12, in: docs(v1beta1NodePool, sharedDifferent, v1Class)},
		// A disruption block without a policy relied on v1beta1's default, WhenUnderutilized.
		{name: "defaulted-policy", fires: 4, in: docs(strings.Replace(strings.Replace(strings.Replace(v1beta1NodePool, "    consolidationPolicy: WhenUnderutilized\n", "", 1), "      kubelet:\n        maxPods: 110   # dense nodes\n        systemReserved:\n          cpu: 100m\n", "", 1), "      resources:\n        cpu: \"1\"\n", "", 1), v1Class)},
		// A pool without kubelet settings on the same class would get them too: refused.
		{name: "kubelet-shared-with-pool-without-settings", fires: 6, in: docs(v1beta1NodePool, nodePool("plain", "default", ""), v1Class)},
		// containerRuntime is not a v1 field: the move leaves it out and says so.
		{name: "kubelet-container-runtime-dropped", fires: 6, in: docs(strings.Replace(v1beta1NodePool, "maxPods: 110   # dense nodes", "maxPods: 110   # dense nodes\n        containerRuntime: containerd", 1), v1Class)},
		{name: "v1-with-dropped-fields", fires: 2, in: docs(strings.Replace(nodePool("dropped", "default", "disruption:\n  expireAfter: Never\n"), "    requirements:", "    resources:\n      cpu: \"1\"\n    requirements:", 1), v1Class)},
		{name: "nodeclassref-without-group", fires: 1, in: docs(strings.Replace(nodePool("nogroup", "default", ""), "        group: karpenter.k8s.aws\n        kind: EC2NodeClass\n", "", 1), v1Class)},
		// Azure's v1beta1 pools give only the name of an AKSNodeClass, here in the input: its group and kind
		// are written, not AWS's.
		{name: "azure-name-only", fires: 2, in: docs(azureV1beta1NodePool("azure", "default"), aksNodeClass("default"))},
		{name: "azure-v1", in: docs(azureNodePool("azure", "default"), aksNodeClass("default"))},
		{name: "azure-group-without-kind", fires: 1, in: docs(strings.Replace(azureNodePool("azure", "default"), "        kind: AKSNodeClass\n", "", 1), aksNodeClass("default"))},
		{name: "azure-apiversion-and-kind", fires: 2, in: strings.Replace(azureV1beta1NodePool("azure", "default"), "        name: default", "        apiVersion: karpenter.azure.com/v1alpha2\n        kind: AKSNodeClass\n        name: default", 1)},
		// Another provider's group, and no class in the input tells the kind: reported without a fix.
		{name: "azure-apiversion-without-kind-class-not-in-input", fires: 2, in: strings.Replace(azureV1beta1NodePool("azure", "default"), "        name: default", "        apiVersion: karpenter.azure.com/v1alpha2\n        name: default", 1)},
		// Only a name, and an EC2NodeClass of that name beside the AKSNodeClass: the EC2NodeClass is meant.
		{name: "name-only-both-providers", fires: 2, in: docs(azureV1beta1NodePool("np", "default"), aksNodeClass("default"), v1Class)},
	})
}
