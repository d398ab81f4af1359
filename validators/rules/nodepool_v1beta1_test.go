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
		{name: "v1-with-dropped-fields", fires: 2, in: docs(strings.Replace(nodePool("dropped", "default", "disruption:\n  expireAfter: Never\n"), "    requirements:", "    resources:\n      cpu: \"1\"\n    requirements:", 1), v1Class)},
		{name: "nodeclassref-without-group", fires: 1, in: docs(strings.Replace(nodePool("nogroup", "default", ""), "        group: karpenter.k8s.aws\n        kind: EC2NodeClass\n", "", 1), v1Class)},
	})
}
