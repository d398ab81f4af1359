package main

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"strings"
	"testing"

	"github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"
)

const otherKinds = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec: {}
---
apiVersion: v1
kind: Service
metadata:
  name: web
`

// TestNothingChecked: a run that finds no EC2NodeClass, NodePool or aws-auth ConfigMap says so on its
// last line, with where it looked, what it found instead and the likely mistake; it passes, unless
// --fail-on-empty makes it a failed run (exit 2, whatever --fail-on says). A run with a Karpenter
// object is not concerned.
func TestNothingChecked(t *testing.T) {
	pool, err := os.ReadFile("../../examples/production/nodepool.yaml")
	if err != nil {
		t.Fatal(err)
	}
	snapshot, err := os.ReadFile("../../examples/production/cluster-facts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeTemp(t, dir, "app/deploy.yaml", otherKinds)
	writeTemp(t, dir, "infra/karpenter/nodepool.yaml", string(pool))
	writeTemp(t, dir, "chart/Chart.yaml", "apiVersion: v2\nname: pools\nversion: 0.1.0\n")
	writeTemp(t, dir, "chart/templates/nodepool.yaml", string(pool))
	writeTemp(t, dir, "infra/.karpenter-guard/cluster-facts.yaml", string(snapshot))
	writeTemp(t, dir, "values.yaml", "replicas: 2\n")
	t.Chdir(dir)

	const none = "nothing checked: no EC2NodeClass, NodePool or aws-auth ConfigMap in "
	for _, tc := range []struct {
		name     string
		args     []string
		stdin    string
		wantCode int
		wantLast string // the last line of standard output; "" for one that is not about an empty run
		wantErr  string // on standard error
	}{
		{
			name: "objects of other kinds", args: []string{"-f", "app/"},
			wantLast: none + "app/, only 2 objects of other kinds: is the path right?",
		},
		{
			name: "objects of other kinds, --fail-on-empty", args: []string{"-f", "app/", "--fail-on-empty"}, wantCode: 2,
			wantLast: none + "app/, only 2 objects of other kinds: is the path right? (--fail-on-empty: the run fails, exit 2)",
		},
		{
			name: "--fail-on never does not make it pass", args: []string{"-f", "app/", "--fail-on-empty", "--fail-on", "never"}, wantCode: 2,
			wantLast: none + "app/, only 2 objects of other kinds: is the path right? (--fail-on-empty: the run fails, exit 2)",
		},
		{
			name: "everything excluded", args: []string{"-f", "infra/", "--exclude", "karpenter"},
			wantLast: none + "infra/, only 1 path excluded by --exclude or .karpenter-guard-ignore: is the path right, or do the exclusions leave the manifests out?",
		},
		{
			name: "a Helm chart", args: []string{"-f", "chart"},
			wantLast: none + "chart, only 1 Helm chart skipped: check the chart rendered: helm template chart | karpenter-guard check -f -",
		},
		{
			name: "standard input", args: []string{"-f", "-"}, stdin: otherKinds,
			wantLast: none + "standard input, only 2 objects of other kinds: does the command piped in render the Karpenter manifests?",
		},
		{
			name: "quiet", args: []string{"-f", "app/", "--quiet"},
			wantLast: none + "app/, only 2 objects of other kinds: is the path right?",
		},
		{
			name: "--diff says it on standard error", args: []string{"-f", "app/", "--diff"},
			wantErr: "note: " + none + "app/, only 2 objects of other kinds: is the path right?\n",
		},
		{
			name: "--diff, --fail-on-empty", args: []string{"-f", "app/", "--diff", "--fail-on-empty"}, wantCode: 2,
			wantErr: "note: " + none + "app/, only 2 objects of other kinds: is the path right?\n",
		},
		{
			name: "only a snapshot", args: []string{"-f", "infra/.karpenter-guard/cluster-facts.yaml"},
			wantLast: none + "infra/.karpenter-guard/cluster-facts.yaml, only 1 ClusterFacts snapshot: is the path right?",
		},
		{
			name: "not Kubernetes objects", args: []string{"-f", "values.yaml"},
			wantLast: none + "values.yaml, only 1 document that is not a Kubernetes object: is the path right?",
		},
		{name: "a Karpenter object", args: []string{"-f", "app/", "-f", "infra/", "--fail-on-empty"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := cli(t, tc.stdin, append([]string{"check"}, tc.args...)...)
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			last := lines[len(lines)-1]
			if code != tc.wantCode || !strings.Contains(stderr, tc.wantErr) {
				t.Fatalf("exit %d, stderr %q; want %d and %q\n%s", code, stderr, tc.wantCode, tc.wantErr, out)
			}
			switch {
			case tc.wantLast != "" && last != tc.wantLast:
				t.Errorf("last line\n%s\nwant\n%s", last, tc.wantLast)
			case tc.wantLast == "" && strings.Contains(out, "nothing checked"):
				t.Errorf("output says nothing was checked:\n%s", out)
			}
		})
	}
}

// TestNothingCheckedFormats: the machine formats of a run that checked nothing stay valid and carry
// the reason where they have a place for it: JSON's summary, a SARIF notification (an error that
// makes the invocation unsuccessful under --fail-on-empty), a JUnit test case, a GitHub annotation
// and the Markdown summary.
func TestNothingCheckedFormats(t *testing.T) {
	dir := t.TempDir()
	writeTemp(t, dir, "app/deploy.yaml", otherKinds)
	t.Chdir(dir)
	const reason = "no EC2NodeClass, NodePool or aws-auth ConfigMap in app/, only 2 objects of other kinds: is the path right?"
	for _, failOnEmpty := range []bool{false, true} {
		args := func(format string) []string {
			a := []string{"check", "-f", "app/", "-o", format}
			if failOnEmpty {
				a = append(a, "--fail-on-empty")
			}
			return a
		}
		wantCode := 0
		if failOnEmpty {
			wantCode = 2
		}
		outputs := map[string]string{}
		for _, format := range reportFormats {
			code, out, stderr := cli(t, "", args(format)...)
			if code != wantCode || stderr != "" {
				t.Fatalf("-o %s, --fail-on-empty %v: exit %d, stderr %q; want %d", format, failOnEmpty, code, stderr, wantCode)
			}
			outputs[format] = out
		}

		var js struct {
			Summary struct {
				Objects        int    `json:"objects"`
				NothingChecked string `json:"nothingChecked"`
			} `json:"summary"`
		}
		if err := json.Unmarshal([]byte(outputs["json"]), &js); err != nil || js.Summary.Objects != 0 || js.Summary.NothingChecked != reason {
			t.Errorf("JSON summary %+v (%v), want objects 0 and nothingChecked %q", js.Summary, err, reason)
		}

		rep, err := sarif.FromBytes([]byte(outputs["sarif"]), sarif.WithStrictValidation())
		if err != nil {
			t.Fatalf("SARIF: %v", err)
		}
		if err := rep.Validate(); err != nil {
			t.Fatalf("SARIF does not validate: %v", err)
		}
		inv := rep.Runs[0].Invocations[0]
		wantLevel := "warning"
		if failOnEmpty {
			wantLevel = "error"
		}
		if n := inv.ToolExecutionNotifications; len(n) != 1 || n[0].Level != wantLevel || *n[0].Message.Text != "nothing checked: "+reason ||
			inv.ExecutionSuccessful == nil || *inv.ExecutionSuccessful == failOnEmpty {
			t.Errorf("SARIF invocation %+v: want one %s notification with the reason, successful unless --fail-on-empty", inv, wantLevel)
		}

		var junit struct {
			Tests  int `xml:"tests,attr"`
			Errors int `xml:"errors,attr"`
			Suites []struct {
				Cases []struct {
					Name    string    `xml:"name,attr"`
					Skipped *struct{} `xml:"skipped"`
					Error   *struct{} `xml:"error"`
				} `xml:"testcase"`
			} `xml:"testsuite"`
		}
		if err := xml.Unmarshal([]byte(outputs["junit"]), &junit); err != nil || junit.Tests != 1 || len(junit.Suites) != 1 || len(junit.Suites[0].Cases) != 1 {
			t.Fatalf("JUnit (%v): want one test case\n%s", err, outputs["junit"])
		}
		c := junit.Suites[0].Cases[0]
		if c.Name != "nothing checked" || (c.Error != nil) != failOnEmpty || (c.Skipped != nil) == failOnEmpty {
			t.Errorf("JUnit test case %+v: want \"nothing checked\", skipped, or an error under --fail-on-empty", c)
		}

		annotation := "::warning title=nothing checked::" + reason + "\n"
		if failOnEmpty {
			annotation = "::error title=nothing checked::" + reason + "\n"
		}
		if !strings.HasPrefix(outputs["github"], annotation) {
			t.Errorf("GitHub commands do not start with %q:\n%s", annotation, outputs["github"])
		}
		if !strings.Contains(outputs["markdown"], "\nnothing checked: "+reason) {
			t.Errorf("Markdown summary lacks the reason:\n%s", outputs["markdown"])
		}
		if !strings.HasSuffix(outputs["text"], "nothing checked: "+reason+map[bool]string{false: "", true: " (--fail-on-empty: the run fails, exit 2)"}[failOnEmpty]+"\n") {
			t.Errorf("text does not end with the reason:\n%s", outputs["text"])
		}
	}
}
