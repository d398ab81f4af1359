package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

// TestNotEvaluatedHintOnce: the text output says how to get facts (facts export, --live) once per
// run, however many objects lacked them, and not at all when every check was evaluated.
func TestNotEvaluatedHintOnce(t *testing.T) {
	a := objects.Ref{Kind: "EC2NodeClass", Name: "a", File: "a.yaml", Line: 1}
	b := objects.Ref{Kind: "NodePool", Name: "b", File: "b.yaml", Line: 1}
	r := &Report{NotEvaluated: []validators.NotEvaluated{
		{Rule: "ami-selector-no-match", Object: a, Reason: "no facts: images", Causes: []string{"no facts"}},
		{Rule: "subnet-public", Object: a, Reason: "no facts: subnets", Causes: []string{"no facts"}},
		{Rule: "node-role-not-found", Object: b, Reason: "no facts: roles", Causes: []string{"no facts"}},
	}}
	var buf bytes.Buffer
	if err := r.WriteText(&buf, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"karpenter-guard facts export", "check --live"} {
		if n := strings.Count(out, want); n != 1 {
			t.Errorf("%q appears %d times, want once:\n%s", want, n, out)
		}
	}

	buf.Reset()
	if err := (&Report{}).WriteText(&buf, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "facts export") || strings.Contains(buf.String(), "--live") {
		t.Errorf("hint without anything not evaluated:\n%s", buf.String())
	}
}
