package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/internal/golden"
)

// budgetNodeClass is the head of an EC2NodeClass whose spec continues on line 10.
const budgetNodeClass = `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: bomb
spec:
  role: r
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {a: b}}]
  securityGroupSelectorTerms: [{tags: {a: b}}]
`

// billionLaughs is an EC2NodeClass whose spec.tags hold nine levels of nine aliases: 699 bytes that
// expand to a billion nodes.
func billionLaughs() string {
	var b strings.Builder
	b.WriteString(budgetNodeClass + "  tags:\n    a0: &a0 \"lol\"\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "    a%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d,", i-1), 9), ","))
	}
	return b.String()
}

// allocated runs f and returns how many bytes the process allocated meanwhile (runtime.MemStats'
// TotalAlloc counts every allocation, freed or not, so it does not depend on when the GC runs).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestCheckYAMLBudget: `check -f` on a file whose aliases expand to a billion nodes, or whose anchors
// refer to themselves, or that nests 100,000 lists, exits 2 with the file and line of the problem,
// still checks the file's other documents, and allocates no more than an ordinary run (a few MiB, not
// the gigabytes expanding the aliases takes). The errors are pinned in testdata/yaml-budget.txt.
func TestCheckYAMLBudget(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	goldenPath := filepath.Join(wd, "testdata", "yaml-budget.txt")
	t.Chdir(t.TempDir()) // relative paths in the output
	files := []struct{ name, doc string }{
		{"bomb.yaml", billionLaughs()},
		{"self-merge.yaml", budgetNodeClass + "  tags: &b {<<: *b}\n"},
		{"self-value.yaml", budgetNodeClass + "  tags: &b {a: *b}\n"},
		{"self-list.yaml", budgetNodeClass + "  subnetSelectorTerms: &s [{tags: {a: b}}, *s]\n"},
		{"nested.yaml", budgetNodeClass + "  tags: " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "\n"},
	}
	var all []string
	for _, f := range files {
		writeTemp(t, ".", f.name, f.doc+"---\n"+cleanPool)
		all = append(all, "-f", f.name)
	}
	var texts []string
	for _, f := range files {
		var code int
		var out, stderr string
		alloc := allocated(func() { code, out, stderr = cli(t, "", "check", "-f", f.name, "--no-color") })
		if code != 2 {
			t.Errorf("%s: exit %d, want 2\n%s%s", f.name, code, out, stderr)
		}
		if !strings.Contains(out+stderr, "error: "+f.name+":1") || !strings.Contains(out, "2 objects checked") || !strings.Contains(out, "1 input error") {
			t.Errorf("%s: want the error at its line and the two other objects checked:\n%s%s", f.name, out, stderr)
		}
		if alloc > 256<<20 {
			t.Errorf("%s: the run allocated %d MiB", f.name, alloc>>20)
		}
		t.Logf("%s: %d KiB allocated", f.name, alloc>>10)
		texts = append(texts, "$ karpenter-guard check -f "+f.name)
		for _, l := range strings.Split(out+stderr, "\n") {
			if strings.HasPrefix(l, "error: ") {
				texts = append(texts, l)
			}
		}
	}
	golden.Compare(t, goldenPath, strings.Join(texts, "\n")+"\n", *update)

	// Standard input, and every file at once.
	code, out, stderr := cli(t, billionLaughs(), "check", "-f", "-")
	if code != 2 || !strings.Contains(stderr+out, "<stdin>:15: YAML aliases expand this document to 980,658,145 nodes") {
		t.Errorf("stdin: exit %d\n%s%s", code, out, stderr)
	}
	code, out, _ = cli(t, "", append([]string{"check", "--no-color"}, all...)...)
	if code != 2 || !strings.Contains(out, "10 objects checked") || !strings.Contains(out, "5 input errors") {
		t.Errorf("all files: exit %d\n%s", code, out)
	}
}

// TestYAMLBudgetInOtherInputs: a facts snapshot, a GuardConfig or a file of a kustomization over the
// budget stops the run with its file and line.
func TestYAMLBudgetInOtherInputs(t *testing.T) {
	dir := t.TempDir()
	clean := writeTemp(t, dir, "clean.yaml", cleanPool)
	kustomization := filepath.Join(dir, "kustomize")
	bomb := writeTemp(t, kustomization, "bomb.yaml", billionLaughs())
	writeTemp(t, kustomization, "kustomization.yaml", "resources: [bomb.yaml]\n")
	factsFile := writeTemp(t, dir, "facts.yaml", "apiVersion: karpenter-guard.io/v1alpha1\nkind: ClusterFacts\ncluster: &c {<<: *c}\n")
	configFile := writeTemp(t, dir, "guard.yaml", "apiVersion: karpenter-guard.io/v1alpha1\nkind: GuardConfig\naws: &a {timeout: 2s, <<: *a}\n")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"facts", []string{"check", "-f", clean, "--facts", factsFile}, "facts " + factsFile + ":3: alias *c is inside the value of its own anchor &c (line 3)"},
		{"config", []string{"check", "-f", clean, "--config", configFile}, "config " + configFile + ": line 3: alias *a is inside the value of its own anchor &a (line 3)"},
		{"kustomize", []string{"check", "-k", kustomization}, bomb + ":15: YAML aliases expand this document to 980,658,145 nodes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := cli(t, "", tc.args...)
			if code != 2 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, want 2 and %q\n%s%s", code, tc.want, out, stderr)
			}
		})
	}
}
