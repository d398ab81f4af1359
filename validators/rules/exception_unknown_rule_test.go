package rules_test

import "testing"

func TestExceptionUnknownRule(t *testing.T) {
	testRule(t, "exception-unknown-rule", []ruleCase{
		{name: "known", in: withSkip(nodeClass("lab", baseSpec), "karpenter-guard.io/skip: imds-v1-enabled\nkarpenter-guard.io/skip-reason: lab\n")},
		{name: "typo", fires: 1, in: withSkip(nodeClass("lab", baseSpec), "karpenter-guard.io/skip: imds-v1-enabeld\nkarpenter-guard.io/skip-reason: lab\n")},
	})
}
