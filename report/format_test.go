package report

import (
	"bytes"
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/internal/golden"
	"github.com/karpenter-guard/karpenter-guard/manifest"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

var update = flag.Bool("update", false, "rewrite the golden files of report/testdata")

// sample is a report with one of everything, and the characters each format must escape: a message
// with a line break, % and a pipe, a path with a comma and a colon, a binary input's control
// characters and a CDATA terminator.
func sample() *Report {
	np := objects.Ref{APIVersion: "karpenter.sh/v1", Kind: "NodePool", Name: "web", File: "deploy/pools,prod:a.yaml", Line: 3}
	nc := objects.Ref{APIVersion: "karpenter.k8s.aws/v1", Kind: "EC2NodeClass", Name: "default", File: "deploy/classes.yaml", Line: 1}
	clean := objects.Ref{APIVersion: "karpenter.sh/v1", Kind: "NodePool", Name: "clean", File: "deploy/classes.yaml", Line: 20}
	cm := objects.Ref{APIVersion: "v1", Kind: "ConfigMap", Name: "aws-auth", Namespace: "kube-system", File: "<stdin>", Line: 1}
	r := &Report{
		Findings: []validators.Finding{
			{Rule: "instance-profile-arn", Action: config.ActionDeny, Object: nc, Field: "spec.instanceProfile", Line: 7,
				Message: "100% wrong | twice\nsecond line", Fix: "instanceProfile: p", Fixable: true},
			{Rule: "imds-v1-enabled", Action: config.ActionWarn, Object: nc, Field: "spec.metadataOptions.httpTokens", Line: 9,
				Message: "IMDSv1 <on> & ]]> here", Fix: "httpTokens: required"},
			{Rule: "imds-v1-enabled", Action: config.ActionWarn, Object: nc, Field: "spec.metadataOptions.httpTokens", Line: 9,
				Message: "the same name twice"},
			{Rule: "nodepool-no-limits", Action: config.ActionAudit, Object: np, Field: "spec.limits", Line: 5, Message: "no limits"},
			{Rule: "aws-auth-malformed", Action: config.ActionDeny, Object: cm, Field: "data.mapRoles", Line: 4, Message: "bad"},
		},
		NotEvaluated: []validators.NotEvaluated{
			{Rule: "subnet-public", Object: np, Reason: "no facts: subnets", Causes: []string{"no facts"}},
			{Rule: "node-role-not-found", Object: np, Reason: "AWS denied iam:GetRole", Causes: []string{"AWS denied iam:GetRole"}},
		},
		Skipped: []validators.Skipped{{Rule: "ebs-unencrypted", Object: np, Reason: "encrypted by the account default"}},
		Errors: []manifest.Error{
			{File: "deploy/broken.yaml", Line: 2, Message: "invalid YAML: \x00\x01 binary"},
			{File: "deploy/broken.yaml", Line: 9, Message: "invalid YAML again"},
		},
		Objects: []objects.Ref{np, nc, clean, cm},
	}
	r.Summary = Summary{Objects: 4, Deny: 2, Warn: 2, Audit: 1, NotEvaluated: 2, Skipped: 1, Errors: 2}
	return r
}

// empty is the report of a run that found no EC2NodeClass, NodePool or aws-auth ConfigMap, only
// objects of other kinds; failOnEmpty as --fail-on-empty sets it.
func empty(failOnEmpty bool) *Report {
	r := New(validators.Result{}, &manifest.Set{Ignored: 2})
	r.Summary.NothingChecked = "no EC2NodeClass, NodePool or aws-auth ConfigMap in app/, only 2 objects of other kinds: is the path right?"
	r.FailOnEmpty = failOnEmpty
	return r
}

// TestFormatGoldens pins each format's rendering of sample and of a run that checked nothing: review
// a change with git diff after -update.
func TestFormatGoldens(t *testing.T) {
	text := func(r *Report, b *bytes.Buffer) error { return r.WriteText(b, TextOptions{}) }
	for _, tc := range []struct {
		file   string
		write  func(*Report, *bytes.Buffer) error
		report func() *Report
	}{
		{"empty.txt", text, func() *Report { return empty(false) }},
		{"empty.fail-on-empty.txt", text, func() *Report { return empty(true) }},
		{"empty.quiet.txt", func(r *Report, b *bytes.Buffer) error { return r.WriteText(b, TextOptions{Quiet: true}) }, func() *Report { return empty(false) }},
		{"empty.json", func(r *Report, b *bytes.Buffer) error { return r.WriteJSON(b) }, func() *Report { return empty(false) }},
		{"empty.github.txt", func(r *Report, b *bytes.Buffer) error { return r.WriteGitHub(b) }, func() *Report { return empty(false) }},
		{"empty.fail-on-empty.github.txt", func(r *Report, b *bytes.Buffer) error { return r.WriteGitHub(b) }, func() *Report { return empty(true) }},
		{"empty.markdown", func(r *Report, b *bytes.Buffer) error { return r.WriteMarkdown(b) }, func() *Report { return empty(false) }},
		{"empty.junit.xml", func(r *Report, b *bytes.Buffer) error { return r.WriteJUnit(b, JUnitOptions{}) }, func() *Report { return empty(false) }},
		{"empty.fail-on-empty.junit.xml", func(r *Report, b *bytes.Buffer) error { return r.WriteJUnit(b, JUnitOptions{}) }, func() *Report { return empty(true) }},
	} {
		t.Run(tc.file, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.write(tc.report(), &b); err != nil {
				t.Fatal(err)
			}
			golden.Compare(t, filepath.Join("testdata", tc.file), b.String(), *update)
		})
	}
	for _, tc := range []struct {
		file  string
		write func(*Report, *bytes.Buffer) error
	}{
		{"sample.junit.xml", func(r *Report, b *bytes.Buffer) error { return r.WriteJUnit(b, JUnitOptions{}) }},
		{"sample.fail-on-warn.junit.xml", func(r *Report, b *bytes.Buffer) error { return r.WriteJUnit(b, JUnitOptions{FailOn: FailOnWarn}) }},
		{"sample.github.txt", func(r *Report, b *bytes.Buffer) error { return r.WriteGitHub(b) }},
		{"sample.markdown", func(r *Report, b *bytes.Buffer) error { return r.WriteMarkdown(b) }},
		{"sample.json", func(r *Report, b *bytes.Buffer) error { return r.WriteJSON(b) }},
	} {
		t.Run(tc.file, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.write(sample(), &b); err != nil {
				t.Fatal(err)
			}
			golden.Compare(t, filepath.Join("testdata", tc.file), b.String(), *update)
		})
	}
}

func TestEscapeGitHub(t *testing.T) {
	for _, tc := range []struct {
		in, data, property string
	}{
		{"plain", "plain", "plain"},
		{"50%", "50%25", "50%25"},
		{"%0A is not a line break", "%250A is not a line break", "%250A is not a line break"},
		{"a\nb\r\nc", "a%0Ab%0D%0Ac", "a%0Ab%0D%0Ac"},
		{"file,with:colon", "file,with:colon", "file%2Cwith%3Acolon"},
		{"::error::injected", "::error::injected", "%3A%3Aerror%3A%3Ainjected"},
	} {
		if got := escapeData(tc.in); got != tc.data {
			t.Errorf("escapeData(%q) = %q, want %q", tc.in, got, tc.data)
		}
		if got := escapeProperty(tc.in); got != tc.property {
			t.Errorf("escapeProperty(%q) = %q, want %q", tc.in, got, tc.property)
		}
	}
}

// TestGitHubOneCommandPerLine: every finding, error and notice is one workflow command on one line,
// whatever its message holds, so that no message can end its command or start another.
func TestGitHubOneCommandPerLine(t *testing.T) {
	var b bytes.Buffer
	if err := sample().WriteGitHub(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	// 2 errors, 5 findings, 1 notice (the object's two checks not evaluated), the summary.
	if len(lines) != 9 {
		t.Fatalf("%d lines, want 9:\n%s", len(lines), b.String())
	}
	levels := map[string]int{}
	for _, l := range lines[:len(lines)-1] {
		level, _, ok := strings.Cut(strings.TrimPrefix(l, "::"), " ")
		if !strings.HasPrefix(l, "::") || !ok {
			t.Errorf("not a workflow command with properties: %q", l)
			continue
		}
		levels[level]++
	}
	if want := map[string]int{"error": 4, "warning": 2, "notice": 2}; !equalCounts(levels, want) {
		t.Errorf("levels %v, want %v", levels, want)
	}
	if !strings.Contains(b.String(), "::error title=aws-auth-malformed::") {
		t.Errorf("a finding on standard input should name no file:\n%s", b.String())
	}
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestParseFailOn(t *testing.T) {
	for _, s := range []string{"deny", "warn", "never"} {
		if f, err := ParseFailOn(s); err != nil || string(f) != s {
			t.Errorf("ParseFailOn(%q) = %q, %v", s, f, err)
		}
	}
	for _, s := range []string{"", "error", "Deny", "audit"} {
		if _, err := ParseFailOn(s); err == nil {
			t.Errorf("ParseFailOn(%q) accepted", s)
		}
	}
}

func TestExitCodeFor(t *testing.T) {
	finding := func(a config.Action) validators.Finding { return validators.Finding{Rule: "r", Action: a} }
	for _, tc := range []struct {
		name     string
		findings []validators.Finding
		errors   []manifest.Error
		want     map[FailOn]int
	}{
		{"nothing", nil, nil, map[FailOn]int{FailOnDeny: 0, FailOnWarn: 0, FailOnNever: 0}},
		{"audit only", []validators.Finding{finding(config.ActionAudit)}, nil, map[FailOn]int{FailOnDeny: 0, FailOnWarn: 0, FailOnNever: 0}},
		{"warn", []validators.Finding{finding(config.ActionAudit), finding(config.ActionWarn)}, nil, map[FailOn]int{FailOnDeny: 0, FailOnWarn: 1, FailOnNever: 0}},
		{"deny", []validators.Finding{finding(config.ActionDeny)}, nil, map[FailOn]int{FailOnDeny: 1, FailOnWarn: 1, FailOnNever: 0}},
		{"input error", []validators.Finding{finding(config.ActionDeny)}, []manifest.Error{{File: "f", Message: "m"}}, map[FailOn]int{FailOnDeny: 2, FailOnWarn: 2, FailOnNever: 2}},
	} {
		r := &Report{Findings: tc.findings, Errors: tc.errors, Summary: Summary{Objects: 1}}
		for f, want := range tc.want {
			if got := r.ExitCodeFor(f); got != want {
				t.Errorf("%s: ExitCodeFor(%s) = %d, want %d", tc.name, f, got, want)
			}
		}
		if got := r.ExitCode(); got != tc.want[FailOnDeny] {
			t.Errorf("%s: ExitCode() = %d, want ExitCodeFor(deny) %d", tc.name, got, tc.want[FailOnDeny])
		}
	}
	// A run that checked nothing passes, unless --fail-on-empty makes it a failed run (2) under every
	// --fail-on, as an unreadable path is.
	for failOnEmpty, want := range map[bool]int{false: 0, true: 2} {
		for _, f := range []FailOn{FailOnDeny, FailOnWarn, FailOnNever} {
			if got := empty(failOnEmpty).ExitCodeFor(f); got != want {
				t.Errorf("nothing checked, FailOnEmpty %v: ExitCodeFor(%s) = %d, want %d", failOnEmpty, f, got, want)
			}
		}
	}
}

// TestEmpty: a run is empty when it evaluated no object and had no input error, which would explain
// why.
func TestEmpty(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    *Report
		want bool
	}{
		{"no object", New(validators.Result{}, &manifest.Set{Ignored: 3}), true},
		{"an object", New(validators.Result{Objects: 1}, &manifest.Set{}), false},
		{"an input error", New(validators.Result{}, &manifest.Set{Errors: []manifest.Error{{File: "f", Message: "m"}}}), false},
	} {
		if got := tc.r.Empty(); got != tc.want {
			t.Errorf("%s: Empty() = %v, want %v", tc.name, got, tc.want)
		}
	}
}
