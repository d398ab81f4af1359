package audit_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpenter-guard/karpenter-guard/audit"
	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/rules"
)

// TestReportsPassResults: every rule the audit runs on an object has exactly one result there, and a
// rule that ran and found nothing is a pass (as Kyverno writes them: one per rule and object), so that
// Policy Reporter's compliance views count what passed; a rule that found something, could not run
// or was skipped is never a pass; the summaries count the passes.
func TestReportsPassResults(t *testing.T) {
	skipped := nodeClass(t, "skipped", map[string]any{"metadataOptions": map[string]any{"httpTokens": "optional"}})
	skipped.SetAnnotations(map[string]string{validators.AnnotationSkip: "imds-v1-enabled", "karpenter-guard.io/skip-reason": "a legacy agent"})
	objs := []client.Object{
		nodeClass(t, "clean", nil),
		nodeClass(t, "arn", map[string]any{"role": nil, "instanceProfile": "arn:aws:iam::111122223333:instance-profile/p"}),
		skipped,
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "aws-auth", Namespace: "kube-system"}, Data: map[string]string{
			"mapRoles": "- rolearn: arn:aws:iam::111122223333:role/KarpenterNodeRole\n  username: system:node:{{EC2PrivateDNSName}}\n  groups: [system:bootstrappers, system:nodes]\n"}},
	}
	got, err := audit.List(context.Background(), fakeClient(objs...).Build())
	if err != nil {
		t.Fatal(err)
	}
	cat, cfg := rules.Default(), config.Default()
	reps := audit.Reports(audit.Run(context.Background(), cat, cfg, facts.None{}, got), config.ModeEnforce, time.Unix(1700000000, 0))

	// status[object][rule] = result
	status := map[string]map[string]string{}
	for _, rep := range reps {
		var counts audit.Summary
		for _, r := range rep.Results {
			obj := r.Resources[0].Kind + "/" + r.Resources[0].Name
			if status[obj] == nil {
				status[obj] = map[string]string{}
			}
			if prev, dup := status[obj][r.Policy]; dup {
				t.Errorf("%s: rule %s has two results, %s and %s", obj, r.Policy, prev, r.Result)
			}
			status[obj][r.Policy] = r.Result
			switch r.Result {
			case "pass":
				counts.Pass++
				if r.Message != audit.PassMessage || !r.Scored || r.Rule != r.Policy || r.Source != "karpenter-guard" ||
					len(r.Resources) != 1 || r.Category != r.Resources[0].Kind || r.Timestamp.Seconds != 1700000000 {
					t.Errorf("pass result %+v: want the rule as policy, one resource, the kind as category, scored, the pass message", r)
				}
				if (rep.Kind == "PolicyReport") != (r.Resources[0].Kind == "ConfigMap") {
					t.Errorf("%s pass in the %s %s", obj, rep.Kind, rep.Name)
				}
			case "fail":
				counts.Fail++
			case "warn":
				counts.Warn++
			case "error":
				counts.Error++
			case "skip":
				counts.Skip++
			}
		}
		if rep.Summary != counts {
			t.Errorf("%s %s: summary %+v, its results count %+v", rep.Kind, rep.Name, rep.Summary, counts)
		}
	}

	for obj, want := range map[string]map[string]string{
		"EC2NodeClass/clean":   {"instance-profile-arn": "pass", "imds-v1-enabled": "pass", "node-role-not-authorized": "error"},
		"EC2NodeClass/arn":     {"instance-profile-arn": "fail", "ami-alias-version-format": "pass"},
		"EC2NodeClass/skipped": {"imds-v1-enabled": "skip", "exception-missing-reason": "pass"},
		"ConfigMap/aws-auth":   {"aws-auth-malformed": "pass", "aws-auth-key-not-read": "pass"},
	} {
		for rule, w := range want {
			if g := status[obj][rule]; g != w {
				t.Errorf("%s: %s is %q, want %q", obj, rule, g, w)
			}
		}
	}

	// Every rule the audit runs on an EC2NodeClass has a result on the clean one: nothing is left out
	// of the compliance count.
	var expected []string
	for _, r := range cat.Rules() {
		runs := r.Scope == validators.ScopeAll || r.Scope == validators.ScopeCLIAndAudit
		if runs && r.AppliesTo(objects.KindEC2NodeClass) && len(r.Operations) == 0 &&
			cfg.ActionFor(r.ID, r.DefaultAction) != config.ActionOff && (r.Enabled == nil || r.Enabled(cfg)) {
			expected = append(expected, r.ID)
		}
	}
	var have []string
	for rule := range status["EC2NodeClass/clean"] {
		have = append(have, rule)
	}
	slices.Sort(expected)
	slices.Sort(have)
	if !slices.Equal(have, expected) {
		t.Errorf("results on the clean class:\n%v\nthe rules the audit runs on it:\n%v", have, expected)
	}
}

// TestPassResultsBounded: up to audit.MaxPassResults every pass is reported, in reports of at most
// 500 results; past it no pass is, every report says how many were left out, and the other results
// are all kept, with summaries that count what the reports hold.
func TestPassResultsBounded(t *testing.T) {
	outcome := func(passes int) *audit.Outcome {
		o := &audit.Outcome{}
		ref := objects.Ref{APIVersion: "karpenter.sh/v1", Kind: "NodePool", Name: "broken"}
		o.Findings = append(o.Findings, validators.Finding{Rule: "nodepool-no-limits", Action: config.ActionWarn, Object: ref, Message: "no limits"})
		for i := 0; i < passes; i++ {
			ref := objects.Ref{APIVersion: "karpenter.sh/v1", Kind: "NodePool", Name: fmt.Sprintf("pool-%05d", i/20)}
			o.Passed = append(o.Passed, validators.Passed{Rule: fmt.Sprintf("rule-%02d", i%20), Object: ref})
		}
		return o
	}
	count := func(reps []*audit.Report) (pass, warn, total int) {
		for _, r := range reps {
			pass += r.Summary.Pass
			warn += r.Summary.Warn
			total += len(r.Results)
			if len(r.Results) > 500 {
				t.Errorf("%s holds %d results", r.Name, len(r.Results))
			}
		}
		return pass, warn, total
	}

	reps := audit.Reports(outcome(audit.MaxPassResults), config.ModeEnforce, time.Now())
	if pass, warn, total := count(reps); pass != audit.MaxPassResults || warn != 1 || total != audit.MaxPassResults+1 {
		t.Errorf("at the bound: %d passes, %d warns, %d results; want every pass and the warn", pass, warn, total)
	}
	for _, r := range reps {
		if _, ok := r.Annotations[audit.PassResultsAnnotation]; ok {
			t.Errorf("%s says passes were left out at the bound", r.Name)
		}
	}

	reps = audit.Reports(outcome(audit.MaxPassResults+1), config.ModeEnforce, time.Now())
	if pass, warn, total := count(reps); pass != 0 || warn != 1 || total != 1 {
		t.Errorf("past the bound: %d passes, %d warns, %d results; want the warn alone", pass, warn, total)
	}
	want := fmt.Sprintf("%d pass results left out (more than %d)", audit.MaxPassResults+1, audit.MaxPassResults)
	for _, r := range reps {
		if !strings.HasPrefix(r.Annotations[audit.PassResultsAnnotation], want) {
			t.Errorf("%s %s: annotation %q, want it to start with %q", r.Kind, r.Name, r.Annotations[audit.PassResultsAnnotation], want)
		}
	}
}

// TestRunBoundsPassRecords: the audit keeps at most audit.MaxPassResults records of rules that passed,
// however many objects it judges, and counts them all, so that the reports can say how many were left
// out.
func TestRunBoundsPassRecords(t *testing.T) {
	run := func(n int) *audit.Outcome {
		var objs []client.Object
		for i := 0; i < n; i++ {
			objs = append(objs, nodeClass(t, fmt.Sprintf("clean-%05d", i), nil))
		}
		got, err := audit.List(context.Background(), fakeClient(objs...).Build())
		if err != nil {
			t.Fatal(err)
		}
		return audit.Run(context.Background(), rules.Default(), config.Default(), facts.None{}, got)
	}
	one := run(1)
	if one.PassedCount == 0 || len(one.Passed) != one.PassedCount {
		t.Fatalf("one class: %d passes recorded of %d", len(one.Passed), one.PassedCount)
	}
	n := audit.MaxPassResults/one.PassedCount + 1
	many := run(n)
	if many.PassedCount != n*one.PassedCount || len(many.Passed) != audit.MaxPassResults {
		t.Errorf("%d classes: %d passes recorded of %d; want %d recorded of %d", n, len(many.Passed), many.PassedCount, audit.MaxPassResults, n*one.PassedCount)
	}
	for _, r := range audit.Reports(many, config.ModeEnforce, time.Now()) {
		if r.Summary.Pass != 0 || !strings.HasPrefix(r.Annotations[audit.PassResultsAnnotation], fmt.Sprintf("%d pass results left out", many.PassedCount)) {
			t.Errorf("%s: %d passes, annotation %q", r.Name, r.Summary.Pass, r.Annotations[audit.PassResultsAnnotation])
		}
	}
}
