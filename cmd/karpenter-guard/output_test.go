package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"
)

// TestCheckExamplesFormats pins the CI formats on the bundled examples, as TestCheckExamples pins
// text and JSON, and checks that --report-file writes, in the same run, what -o prints.
func TestCheckExamplesFormats(t *testing.T) {
	inRepoRoot(t)
	dir := t.TempDir()
	var reportFiles []string
	for _, tc := range []struct{ format, golden string }{
		{"junit", "examples.junit.xml"},
		{"github", "examples.github.txt"},
		{"sarif", "examples.sarif.json"},
		{"markdown", "examples.markdown"},
	} {
		code, out, stderr := cli(t, "", "check", "-f", "examples/", "-o", tc.format)
		if code != 1 || stderr != "" {
			t.Fatalf("-o %s: exit %d, stderr %q; want 1 (deny findings) and no stderr", tc.format, code, stderr)
		}
		goldenFile(t, tc.golden, out)
		reportFiles = append(reportFiles, "--report-file", tc.format+"="+filepath.Join(dir, tc.golden))
	}
	code, out, stderr := cli(t, "", append([]string{"check", "-f", "examples/", "-o", "json"}, reportFiles...)...)
	if code != 1 || stderr != "" {
		t.Fatalf("--report-file: exit %d, stderr %q", code, stderr)
	}
	goldenFile(t, "examples.json", out)
	for _, name := range []string{"examples.junit.xml", "examples.github.txt", "examples.sarif.json", "examples.markdown"} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		goldenFile(t, name, string(got))
	}
}

// TestSARIFExamplesSchema validates the examples' SARIF golden against the SARIF 2.1.0 schema that
// go-sarif embeds, after checking that go-sarif read every member of it (what it does not know it
// would drop, and the schema would never see), and that every check not evaluated is a notification.
func TestSARIFExamplesSchema(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "examples.sarif.json"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := sarif.FromBytes(data, sarif.WithStrictValidation())
	if err != nil {
		t.Fatal(err)
	}
	var raw, reread any
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	again, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(again, &reread); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(raw, reread) {
		t.Fatal("go-sarif does not read the golden back as written: a member unknown to SARIF 2.1.0?")
	}
	if err := rep.Validate(); err != nil {
		t.Fatalf("SARIF does not validate: %v", err)
	}

	var js struct {
		NotEvaluated []struct{ Rule string } `json:"notEvaluated"`
	}
	jsData, err := os.ReadFile(filepath.Join("testdata", "examples.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(jsData, &js); err != nil {
		t.Fatal(err)
	}
	notes := 0
	for _, n := range rep.Runs[0].Invocations[0].ToolExecutionNotifications {
		if n.Level != "note" {
			continue
		}
		notes++
		if n.AssociatedRule == nil || n.AssociatedRule.ID == nil || n.AssociatedRule.Index < 0 || n.Message == nil ||
			!strings.Contains(*n.Message.Text, " not evaluated on ") || len(n.Locations) != 1 {
			t.Errorf("notification %+v: want the rule (id and index), a message with the reason, the object's location", n)
			continue
		}
		if got := *rep.Runs[0].Tool.Driver.Rules[n.AssociatedRule.Index].ID; got != *n.AssociatedRule.ID {
			t.Errorf("associatedRule %s has the index of %s", *n.AssociatedRule.ID, got)
		}
	}
	if notes != len(js.NotEvaluated) || notes == 0 {
		t.Errorf("%d note notifications for %d checks not evaluated", notes, len(js.NotEvaluated))
	}
}

const warnOnly = `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: ok
spec:
  amiSelectorTerms: [{alias: al2023@v20251112}]
  role: r
  subnetSelectorTerms: [{tags: {a: b}}]
  securityGroupSelectorTerms: [{tags: {a: b}}]
  metadataOptions: {httpTokens: optional}
`

// TestFailOn: which findings make check exit 1 under each --fail-on, and that input errors exit 2
// whatever it says.
func TestFailOn(t *testing.T) {
	dir := t.TempDir()
	warn := writeTemp(t, dir, "warn.yaml", warnOnly)
	deny := writeTemp(t, dir, "deny.yaml", strings.Replace(warnOnly, "role: r", "instanceProfile: arn:aws:iam::1:instance-profile/p", 1))
	missing := filepath.Join(dir, "missing.yaml")
	for _, tc := range []struct {
		file   string
		failOn string
		want   int
	}{
		{warn, "", 0},
		{warn, "deny", 0},
		{warn, "warn", 1},
		{warn, "never", 0},
		{deny, "", 1},
		{deny, "warn", 1},
		{deny, "never", 0},
		{missing, "never", 2},
	} {
		args := []string{"check", "-f", tc.file, "-o", "json"}
		if tc.failOn != "" {
			args = append(args, "--fail-on", tc.failOn)
		}
		code, out, stderr := cli(t, "", args...)
		if code != tc.want {
			t.Errorf("%s --fail-on %q: exit %d, want %d\n%s%s", filepath.Base(tc.file), tc.failOn, code, tc.want, out, stderr)
		}
	}
	// The JUnit report agrees with the exit code: a warn finding fails its test case only under
	// --fail-on warn.
	for failOn, want := range map[string]string{"deny": `failures="0"`, "warn": `failures="1"`} {
		_, out, _ := cli(t, "", "check", "-f", warn, "-o", "junit", "--fail-on", failOn)
		if !regexp.MustCompile(`<testsuites name="karpenter-guard" tests="[0-9]+" ` + want).MatchString(out) {
			t.Errorf("--fail-on %s: JUnit lacks %s:\n%s", failOn, want, out)
		}
	}
}

// TestReportFlagsRefused: a wrong --fail-on, -o or --report-file stops check before it reads
// anything, with exit 2 and what was expected.
func TestReportFlagsRefused(t *testing.T) {
	dir := t.TempDir()
	clean := writeTemp(t, dir, "clean.yaml", cleanPool)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--fail-on", "error"}, `unknown --fail-on "error": expected deny, warn or never`},
		{[]string{"-o", "xml"}, `unknown output "xml": expected text, json, sarif, junit, github or markdown`},
		{[]string{"--report-file", "sarif"}, `--report-file "sarif": expected FORMAT=PATH`},
		{[]string{"--report-file", "xml=out.xml"}, `unknown format "xml"`},
		{[]string{"--report-file", "sarif=" + filepath.Join(dir, "no-such-dir", "out.sarif")}, "no-such-dir does not exist: create it first"},
	} {
		code, out, stderr := cli(t, "", append([]string{"check", "-f", clean}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want 2 and %q", tc.args, code, stderr, out, tc.want)
		}
	}
}
