package rules_test

import "testing"

func TestNodepoolRequirementsUnsatisfiable(t *testing.T) {
	req := func(key, op, values string) string {
		r := "- key: " + key + "\n  operator: " + op + "\n"
		if values != "" {
			r += "  values: [" + values + "]\n"
		}
		return r
	}
	class := nodeClass("default", eksSpec)
	types := realInstanceTypes()
	testRule(t, "nodepool-requirements-unsatisfiable", []ruleCase{
		{name: "families-that-exist", in: docs(class, poolWith("general", "default", req("karpenter.k8s.aws/instance-family", "In", "m5, m7g"))), facts: netFacts(types)},
		{name: "gpu-pool", in: docs(class, poolWith("gpu", "default", req("karpenter.k8s.aws/instance-gpu-count", "Gt", "0"))), facts: netFacts(types)},
		{name: "unknown-key-ignored", in: docs(class, poolWith("bw", "default", req("karpenter.k8s.aws/instance-network-bandwidth", "Gt", "100000"))), facts: netFacts(types)},
		{name: "family-typo", fires: 1, in: docs(class, poolWith("general", "default", req("karpenter.k8s.aws/instance-family", "In", "m9"))), facts: netFacts(types)},
		{name: "requirements-exclude-each-other", fires: 1, in: docs(class, poolWith("general", "default", req("karpenter.k8s.aws/instance-category", "In", "t")+req("karpenter.k8s.aws/instance-cpu", "Gt", "64"))), facts: netFacts(types)},
		{name: "min-values-strict", fires: 1, in: docs(class, poolWith("general", "default", "- key: karpenter.k8s.aws/instance-family\n  operator: In\n  values: [m5, m7g]\n  minValues: 3\n")), facts: netFacts(types)},
		{name: "min-values-best-effort", in: docs(class, poolWith("general", "default", "- key: karpenter.k8s.aws/instance-family\n  operator: In\n  values: [m5, m7g]\n  minValues: 3\n")), facts: netFacts(types),
			cfg: "apiVersion: karpenter-guard.io/v1alpha1\nkind: GuardConfig\nkarpenter:\n  minValuesPolicy: BestEffort\n"},
		{name: "zone-rule-fires-instead", in: docs(class, poolWith("general", "default", req("topology.kubernetes.io/zone", "In", "us-east-1f"))), facts: netFacts(types)},
		{name: "instance-types-unknown", in: docs(class, poolWith("general", "default", req("karpenter.k8s.aws/instance-family", "In", "m9"))), facts: netFacts(), notEvaluated: "not in the facts snapshot: instanceTypes"},
	})
}
