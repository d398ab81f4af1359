package rules_test

import (
	"strings"
	"testing"
)

// aksNodeClass renders Azure's node class, which karpenter-guard does not check but reads by name.
func aksNodeClass(name string) string {
	return "apiVersion: karpenter.azure.com/v1beta1\nkind: AKSNodeClass\nmetadata:\n  name: " + name + "\nspec:\n  imageFamily: Ubuntu\n"
}

// azureV1beta1NodePool renders a v1beta1 NodePool as Azure's examples write it: its nodeClassRef gives
// only the name of an AKSNodeClass.
func azureV1beta1NodePool(name, class string) string {
	return `apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata:
  name: ` + name + `
spec:
  template:
    spec:
      requirements:
        - key: karpenter.azure.com/sku-family
          operator: In
          values: [D]
      nodeClassRef:
        name: ` + class + `
  limits:
    cpu: "100"
`
}

// azureNodePool renders a v1 NodePool whose nodeClassRef names an AKSNodeClass with group and kind.
func azureNodePool(name, class string) string {
	return strings.Replace(nodePool(name, class, ""), "group: karpenter.k8s.aws\n        kind: EC2NodeClass", "group: karpenter.azure.com\n        kind: AKSNodeClass", 1)
}

func TestNodepoolNodeclassMissing(t *testing.T) {
	testRule(t, "nodepool-nodeclass-missing", []ruleCase{
		{name: "present", in: docs(nodePool("np", "default", ""), nodeClass("default", baseSpec))},
		{name: "other-provider", in: strings.Replace(nodePool("np", "x", ""), "kind: EC2NodeClass", "kind: AKSNodeClass", 1)},
		{name: "missing", fires: 1, in: docs(nodePool("np", "defualt", ""), nodeClass("default", baseSpec))},
		// Azure's v1beta1 pools name their AKSNodeClass only by name: the class in the input is it.
		{name: "azure-v1beta1-name-only", in: docs(azureV1beta1NodePool("azure", "default"), aksNodeClass("default"))},
		{name: "azure-v1beta1-name-only-class-in-list", in: docs(azureV1beta1NodePool("azure", "default"), `apiVersion: v1
kind: List
items:
  - apiVersion: karpenter.azure.com/v1beta1
    kind: AKSNodeClass
    metadata:
      name: default
`)},
		{name: "azure-v1", in: docs(azureNodePool("azure", "default"), aksNodeClass("default"))},
		{name: "azure-v1-class-not-in-input", in: azureNodePool("azure", "default")},
		// A group that is not AWS's says the class is another provider's, kind or not.
		{name: "azure-group-only", in: strings.Replace(azureNodePool("azure", "default"), "        kind: AKSNodeClass\n", "", 1)},
		{name: "azure-v1beta1-apiversion-only", in: strings.Replace(azureV1beta1NodePool("azure", "default"), "        name: default", "        apiVersion: karpenter.azure.com/v1alpha2\n        name: default", 1)},
		// Only a name, and the AKSNodeClass of the input has another: an EC2NodeClass is meant, and missing.
		{name: "name-only-other-provider-class-of-another-name", fires: 1, in: docs(azureV1beta1NodePool("np", "default"), aksNodeClass("azure"))},
		// Only a name, and an EC2NodeClass of that name is in the input beside the AKSNodeClass: the EC2NodeClass.
		{name: "name-only-both-providers", in: docs(azureV1beta1NodePool("np", "default"), aksNodeClass("default"), nodeClass("default", baseSpec))},
		// The ref says EC2NodeClass: an AKSNodeClass of that name is not it.
		{name: "ec2-kind-with-aks-class-of-that-name", fires: 1, in: docs(strings.Replace(nodePool("np", "default", ""), "        group: karpenter.k8s.aws\n", "", 1), aksNodeClass("default"))},
	})
}
