package validators_test

import (
	"context"
	"strings"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

func withSkip(doc, ann string) string {
	return strings.Replace(doc, "metadata:\n", "metadata:\n  annotations:\n"+indent(ann, "    "), 1)
}

func TestExceptionMissingReason(t *testing.T) {
	testRule(t, "exception-missing-reason", []ruleCase{
		{name: "with-reason", in: withSkip(nodeClass("lab", baseSpec), "karpenter-guard.io/skip: imds-v1-enabled\nkarpenter-guard.io/skip-reason: lab nodes run a legacy agent\n")},
		{name: "without-reason", fires: 1, in: withSkip(nodeClass("lab", baseSpec), "karpenter-guard.io/skip: imds-v1-enabled, ebs-unencrypted\n")},
	})
}

func TestExceptionUnknownRule(t *testing.T) {
	testRule(t, "exception-unknown-rule", []ruleCase{
		{name: "known", in: withSkip(nodeClass("lab", baseSpec), "karpenter-guard.io/skip: imds-v1-enabled\nkarpenter-guard.io/skip-reason: lab\n")},
		{name: "typo", fires: 1, in: withSkip(nodeClass("lab", baseSpec), "karpenter-guard.io/skip: imds-v1-enabeld\nkarpenter-guard.io/skip-reason: lab\n")},
	})
}

// TestSkipIsRecorded checks that a skipped rule neither fires nor disappears: it is listed as skipped
// with its reason.
func TestSkipIsRecorded(t *testing.T) {
	in := withSkip(nodeClass("lab", baseSpec+"metadataOptions:\n  httpTokens: optional\n"),
		"karpenter-guard.io/skip: imds-v1-enabled\nkarpenter-guard.io/skip-reason: lab nodes run a legacy agent\n")
	set := readString(t, "skip.yaml", in)
	cat := validators.Default()
	res := cat.Evaluate(&validators.Context{Context: context.Background(), Facts: facts.None{}, Input: set.Objects, Scope: validators.ScopeCLI}, set.Objects)
	for _, f := range res.Findings {
		if f.Rule == "imds-v1-enabled" {
			t.Fatalf("skipped rule still fired: %+v", f)
		}
	}
	if len(res.Skipped) != 1 || res.Skipped[0].Rule != "imds-v1-enabled" || res.Skipped[0].Reason != "karpenter-guard.io/skip: lab nodes run a legacy agent" {
		t.Fatalf("skipped = %+v, want imds-v1-enabled with its reason", res.Skipped)
	}
}
