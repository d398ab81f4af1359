package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"

	"github.com/karpenter-guard/karpenter-guard/internal/golden"
)

// cli runs the CLI in-process from the repository root and returns its exit code and outputs.
func cli(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func inRepoRoot(t *testing.T) {
	t.Helper()
	t.Chdir("../..")
}

func goldenFile(t *testing.T, name, got string) {
	t.Helper()
	golden.Compare(t, filepath.Join("cmd", "karpenter-guard", "testdata", name), got, *update)
}

// TestCheckExamples pins what a new user sees on the bundled examples, as text and as JSON.
func TestCheckExamples(t *testing.T) {
	inRepoRoot(t)
	code, text, stderr := cli(t, "", "check", "-f", "examples/")
	if code != 1 || stderr != "" {
		t.Fatalf("exit %d, stderr %q; want 1 (deny findings) and no stderr", code, stderr)
	}
	goldenFile(t, "examples.txt", text)
	code, js, _ := cli(t, "", "check", "-f", "examples/", "-o", "json")
	if code != 1 {
		t.Fatalf("json: exit %d, want 1", code)
	}
	goldenFile(t, "examples.json", js)
}

// TestProductionExampleIsClean: the correct setup produces no finding at all.
func TestProductionExampleIsClean(t *testing.T) {
	inRepoRoot(t)
	code, out, _ := cli(t, "", "check", "-f", "examples/production", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", code, out)
	}
	var rep struct {
		Findings []any `json:"findings"`
		Summary  struct {
			Objects int `json:"objects"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 0 || rep.Summary.Objects != 3 {
		t.Fatalf("findings %v, objects %d; want none on 3 objects", rep.Findings, rep.Summary.Objects)
	}
}

// TestJSONContract decodes the JSON output strictly into the documented shape, so a
// renamed or retyped field fails here before it breaks a user's pipeline.
func TestJSONContract(t *testing.T) {
	inRepoRoot(t)
	_, out, _ := cli(t, "", "check", "-f", "examples/field-reports/02-ami-name-without-owner.yaml", "-f", "testdata-does-not-exist", "-o", "json")
	type ref struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Name       string `json:"name"`
		Namespace  string `json:"namespace"`
		File       string `json:"file"`
		Line       int    `json:"line"`
	}
	var rep struct {
		SchemaVersion string `json:"schemaVersion"`
		Findings      []struct {
			Rule    string `json:"rule"`
			Action  string `json:"action"`
			Object  ref    `json:"object"`
			Field   string `json:"field"`
			Line    int    `json:"line"`
			Message string `json:"message"`
			Fix     string `json:"fix"`
			Fixable bool   `json:"fixable"`
		} `json:"findings"`
		NotEvaluated []struct {
			Rule   string `json:"rule"`
			Object ref    `json:"object"`
			Reason string `json:"reason"`
		} `json:"notEvaluated"`
		Skipped []struct {
			Rule   string `json:"rule"`
			Object ref    `json:"object"`
			Reason string `json:"reason"`
		} `json:"skipped"`
		Errors []struct {
			File    string `json:"file"`
			Line    int    `json:"line"`
			Message string `json:"message"`
		} `json:"errors"`
		Unread []struct {
			Path   string `json:"path"`
			Reason string `json:"reason"`
			Kind   string `json:"kind"`
		} `json:"unread"`
		Summary struct {
			Objects, Deny, Warn, Audit, NotEvaluated, Skipped, Errors, Ignored, NotObjects, Excluded, Unread, Rendered, Fixed int
		} `json:"summary"`
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		t.Fatalf("output does not match the documented shape: %v\n%s", err, out)
	}
	// Without image facts a name term without an owner is a warning (it may work today).
	if len(rep.Findings) != 2 || rep.Summary.Warn != 2 || rep.Summary.Errors != 1 || len(rep.Errors) != 1 {
		t.Fatalf("findings %d, warn %d, errors %d: want 2, 2, 1", len(rep.Findings), rep.Summary.Warn, rep.Summary.Errors)
	}
	f := rep.Findings[0]
	want := ref{APIVersion: "karpenter.k8s.aws/v1", Kind: "EC2NodeClass", Name: "pinned-ami", File: "examples/field-reports/02-ami-name-without-owner.yaml", Line: 4}
	if rep.SchemaVersion != "karpenter-guard.io/report/v1" {
		t.Errorf("schemaVersion %q", rep.SchemaVersion)
	}
	if f.Rule != "ami-selector-missing-owner" || f.Action != "warn" || f.Object != want || f.Field != "spec.amiSelectorTerms[0]" ||
		f.Line != 11 || f.Fix != "add owner: amazon" || !f.Fixable {
		t.Errorf("first finding = %+v", f)
	}
	if rep.NotEvaluated[0].Reason == "" || !strings.HasPrefix(rep.NotEvaluated[0].Reason, "no facts: ") {
		t.Errorf("notEvaluated reason %q should name the missing facts", rep.NotEvaluated[0].Reason)
	}
	if rep.Errors[0].File != "testdata-does-not-exist" || !strings.Contains(rep.Errors[0].Message, "no such file") {
		t.Errorf("error = %+v", rep.Errors[0])
	}
}

// TestSARIF checks the SARIF output against the SARIF 2.1.0 schema and that results carry file and line.
func TestSARIF(t *testing.T) {
	inRepoRoot(t)
	code, out, _ := cli(t, "", "check", "-f", "examples/field-reports/04-instance-profile-arn.yaml", "-o", "sarif")
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	rep, err := sarif.FromString(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Validate(); err != nil {
		t.Fatalf("SARIF does not validate: %v", err)
	}
	run := rep.Runs[0]
	if len(run.Results) != 3 {
		t.Fatalf("%d results, want 3", len(run.Results))
	}
	r := run.Results[0]
	loc := r.Locations[0].PhysicalLocation
	if *r.RuleID != "instance-profile-arn" || r.Level != "error" || *loc.ArtifactLocation.URI != "examples/field-reports/04-instance-profile-arn.yaml" || *loc.Region.StartLine != 10 {
		t.Errorf("result = rule %s level %s at %s:%d", *r.RuleID, r.Level, *loc.ArtifactLocation.URI, *loc.Region.StartLine)
	}
	if len(run.Tool.Driver.Rules) < 30 {
		t.Errorf("rule metadata for %d rules, want the whole catalog", len(run.Tool.Driver.Rules))
	}
}

func writeTemp(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const cleanPool = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: ok
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: ok}
      requirements: [{key: kubernetes.io/os, operator: In, values: [linux]}]
  limits: {cpu: "10"}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: ok
spec:
  amiSelectorTerms: [{alias: al2023@v20251112}]
  role: r
  subnetSelectorTerms: [{tags: {a: b}}]
  securityGroupSelectorTerms: [{tags: {a: b}}]
`

// TestExitCodesAndBadInput covers the exit codes and that every kind of bad input is reported with
// its file and line while the other documents are still checked.
func TestExitCodesAndBadInput(t *testing.T) {
	dir := t.TempDir()
	clean := writeTemp(t, dir, "clean.yaml", cleanPool)
	deny := writeTemp(t, dir, "deny.yaml", strings.Replace(cleanPool, "role: r", "instanceProfile: arn:aws:iam::1:instance-profile/p", 1))
	broken := writeTemp(t, dir, "broken.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x\n---\n"+strings.Replace(cleanPool, "role: r", "instanceProfile: arn:aws:iam::1:instance-profile/p", 1))
	wrongType := writeTemp(t, dir, "wrong-type.yaml", strings.Replace(cleanPool, "amiSelectorTerms: [{alias: al2023@v20251112}]", "amiSelectorTerms: al2023@latest", 1))
	empty := writeTemp(t, dir, "empty.yaml", "")
	binary := writeTemp(t, dir, "binary.yaml", "apiVersion: v1\n\x00\x01\x02")
	unknownKind := writeTemp(t, dir, "unknown.yaml", "apiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata: {name: default}\n")
	badConfig := writeTemp(t, dir, "guard.yaml", "apiVersion: karpenter-guard.io/v1alpha1\nkind: GuardConfig\nrules:\n  no-such-rule: deny\n")
	big := writeTemp(t, dir, "big.yaml", strings.Repeat("# padding\n", 200))
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		contains []string
	}{
		{"clean", []string{"check", "-f", clean}, 0, []string{"2 objects checked: 0 deny"}},
		{"deny", []string{"check", "-f", deny}, 1, []string{"[instance-profile-arn]", "fix: instanceProfile: p"}},
		{"broken yaml keeps the other document", []string{"check", "-f", broken}, 2, []string{broken + ":3: invalid YAML", "[instance-profile-arn]", "1 input error"}},
		{"wrong type names the line", []string{"check", "-f", wrongType}, 2, []string{wrongType + ":17:", "line 17: expected a list, found the string `al2023@...`"}},
		{"empty file", []string{"check", "-f", empty}, 2, []string{empty + ":1: file is empty"}},
		{"binary file", []string{"check", "-f", binary}, 2, []string{binary + ":2: binary data"}},
		{"removed kind", []string{"check", "-f", unknownKind}, 2, []string{"Provisioner was removed in Karpenter v0.32"}},
		{"size limit", []string{"check", "-f", big, "--max-file-size", "1024"}, 2, []string{"larger than the 1 KiB limit"}},
		{"missing path", []string{"check", "-f", filepath.Join(dir, "nope")}, 2, []string{"nope: cannot read: no such file or directory"}},
		{"quiet hides warnings", []string{"check", "-f", clean, "--quiet"}, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := cli(t, "", tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, stderr)
			}
			for _, c := range tc.contains {
				if !strings.Contains(out+stderr, c) {
					t.Errorf("output lacks %q:\n%s%s", c, out, stderr)
				}
			}
			if tc.name == "quiet hides warnings" && out != "" {
				t.Errorf("--quiet on a clean file printed %q", out)
			}
		})
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"bad config", []string{"check", "--config", badConfig, "-f", clean}, `unknown rule "no-such-rule"`},
		{"no files", []string{"check"}, "check needs at least one -f PATH"},
		{"bad output", []string{"check", "-f", clean, "-o", "yaml"}, `unknown output "yaml"`},
		{"fix and diff", []string{"check", "-f", clean, "--fix", "--diff"}, "--fix and --diff exclude each other"},
		{"fix stdin", []string{"check", "-f", "-", "--fix"}, "--fix cannot rewrite standard input"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := cli(t, strings.Replace(cleanPool, "role: r", "instanceProfile: arn:aws:iam::1:instance-profile/p", 1), tc.args...)
			if code != 2 || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d stderr %q stdout %q; want 2 and %q", code, stderr, out, tc.want)
			}
		})
	}
}

func TestStdin(t *testing.T) {
	code, out, _ := cli(t, strings.Replace(cleanPool, "role: r", "instanceProfile: arn:aws:iam::1:instance-profile/p", 1), "check", "-f", "-")
	if code != 1 || !strings.Contains(out, "<stdin>:18 spec.instanceProfile") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

// TestFixAndDiff runs --diff, --fix and --fix again on a copy of the examples: the diff shows the
// change without writing, --fix writes it keeping comments, the second run changes nothing.
func TestFixAndDiff(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile("../../examples/field-reports/01-v1beta1-nodepool.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := writeTemp(t, dir, "v1beta1.yaml", string(src))

	code, diff, _ := cli(t, "", "check", "-f", p, "--diff")
	if code != 1 || !strings.Contains(diff, "-apiVersion: karpenter.sh/v1beta1\n+apiVersion: karpenter.sh/v1\n") {
		t.Fatalf("--diff exit %d:\n%s", code, diff)
	}
	if now, _ := os.ReadFile(p); string(now) != string(src) {
		t.Fatal("--diff wrote the file")
	}

	code, out, stderr := cli(t, "", "check", "-f", p, "--fix")
	if code != 0 {
		t.Fatalf("--fix exit %d (want 0: every deny finding of this file is fixable)\n%s%s", code, out, stderr)
	}
	if !strings.Contains(out, "8 findings fixed") {
		t.Errorf("summary does not count the fixes:\n%s", out)
	}
	fixed, _ := os.ReadFile(p)
	for _, keep := range []string{"# Field report: a Karpenter troubleshooting guide", "expireAfter: 720h", "karpenter.sh/do-not-disrupt: \"true\"", "  kubelet:\n    maxPods: 110\n", "    - alias: al2023@latest\n"} {
		if !strings.Contains(string(fixed), keep) {
			t.Errorf("fixed file lacks %q:\n%s", keep, fixed)
		}
	}
	code, diff, _ = cli(t, "", "check", "-f", p, "--diff")
	if code != 0 || diff != "" {
		t.Fatalf("after --fix, --diff exit %d:\n%s", code, diff)
	}
	code, _, _ = cli(t, "", "check", "-f", p, "--fix")
	if again, _ := os.ReadFile(p); code != 0 || string(again) != string(fixed) {
		t.Fatalf("second --fix changed the file or failed (exit %d)", code)
	}
}

// TestFixNeverWritesWhatTheAPIServerRefuses: a v1beta1 NodePool whose expireAfter v1 refuses ("30
// days" matches neither a duration nor Never) would, once converted, be refused by the API server:
// --fix leaves it as it was and says why.
func TestFixNeverWritesWhatTheAPIServerRefuses(t *testing.T) {
	dir := t.TempDir()
	src := `apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata:
  name: monthly
spec:
  template:
    spec:
      nodeClassRef: {name: default}
      requirements: [{key: kubernetes.io/os, operator: In, values: [linux]}]
  disruption:
    consolidationPolicy: WhenEmpty
    consolidateAfter: 30s
    expireAfter: 30 days
`
	p := writeTemp(t, dir, "v1beta1.yaml", src)
	code, out, stderr := cli(t, "", "check", "-f", p, "--fix")
	if code != 1 || !strings.Contains(stderr, `NodePool "monthly" not fixed: once fixed, the API server would refuse it`) || !strings.Contains(stderr, "spec.template.spec.expireAfter") {
		t.Errorf("--fix exit %d, want 1 (the denies stay) and a note naming the API server's refusal of spec.template.spec.expireAfter\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	if now, _ := os.ReadFile(p); string(now) != src {
		t.Errorf("--fix changed the file:\n%s", now)
	}
}

func TestRulesAndVersion(t *testing.T) {
	code, out, _ := cli(t, "", "rules", "-o", "json")
	var rules []struct {
		ID, DefaultAction, Summary, Doc string
		Needs                           []string
	}
	if code != 0 || json.Unmarshal([]byte(out), &rules) != nil || len(rules) < 30 {
		t.Fatalf("rules -o json: exit %d, %d rules", code, len(rules))
	}
	for _, r := range rules {
		if r.ID == "" || r.DefaultAction == "" || r.Summary == "" || r.Doc == "" {
			t.Errorf("incomplete rule %+v", r)
		}
	}
	code, out, _ = cli(t, "", "rules")
	if code != 0 || !strings.HasPrefix(out, "ID ") || !strings.Contains(out, "nodepool-v1beta1") || !strings.Contains(out, "(cli only)") {
		t.Fatalf("rules text: %s", out)
	}
	code, out, _ = cli(t, "", "version")
	if code != 0 || !strings.HasPrefix(out, "karpenter-guard dev (commit ") {
		t.Fatalf("version: %s", out)
	}
}
