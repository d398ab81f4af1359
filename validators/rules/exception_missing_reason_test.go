package rules_test

import "testing"

func TestExceptionMissingReason(t *testing.T) {
	testRule(t, "exception-missing-reason", []ruleCase{
		{name: "with-reason", in: withSkip(nodeClass("lab", baseSpec), "karpenter-guard.io/skip: imds-v1-enabled\nkarpenter-guard.io/skip-reason: lab nodes run a legacy agent\n")},
		{name: "without-reason", fires: 1, in: withSkip(nodeClass("lab", baseSpec), "karpenter-guard.io/skip: imds-v1-enabled, ebs-unencrypted\n")},
	})
}
