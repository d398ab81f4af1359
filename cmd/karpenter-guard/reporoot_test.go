package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/internal/golden"
)

// reporoot is a typical GitOps repository: a Helm chart with templates and values, plain Karpenter
// manifests, a kustomize base with a prod overlay that patches an EC2NodeClass and a staging overlay
// that prefixes names, a kustomization that does not build, Terraform templates and outputs, CI
// configuration in a hidden directory, a .karpenter-guard-ignore and the cluster's snapshot in
// .karpenter-guard/cluster-facts.yaml.
const reporoot = "testdata/reporoot"

// copyRepository copies the reporoot fixture into a temporary directory, makes it a repository (a
// .git directory, which the fixture cannot hold), applies edits (path → content, "" removes) and
// changes into it.
func copyRepository(t *testing.T, edits map[string]string) string {
	t.Helper()
	return copyRepositoryFrom(t, reporoot, edits)
}

// copyRepositoryFrom is copyRepository of the fixture in src (relative to the package directory).
func copyRepositoryFrom(t *testing.T, src string, edits map[string]string) string {
	t.Helper()
	root := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return writeFixture(filepath.Join(root, rel), string(data))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	for rel, text := range edits {
		p := filepath.Join(root, rel)
		if text == "" {
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := writeFixture(p, text); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(root)
	return root
}

func writeFixture(path, text string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(text), 0o600)
}

// TestRepositoryRoot: check at the root of a GitOps repository reports the manifests' findings and
// exits 0 or 1, never 2: files that are not Kubernetes objects are skipped and counted, the chart is
// skipped with a note saying how to check it, the ignore file keeps Terraform templates and kustomize
// patches out, and the snapshot in .karpenter-guard is found and named. -k renders a kustomization and
// reports each object at its source; --exclude leaves paths out; a kustomization that does not build
// fails the run with kustomize's reason.
func TestRepositoryRoot(t *testing.T) {
	goldenDir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		args  []string
		edits map[string]string
		code  int
		// golden names the file holding stdout, then "---", then stderr; empty: not compared.
		golden      string
		contains    []string
		notContains []string
		// absolute allows absolute paths in the output: kustomize's errors name files so.
		absolute bool
	}{
		{
			name: "root", args: []string{"check", "-f", "."}, code: 1, golden: "reporoot-root.txt",
			contains: []string{
				"(5 of other kinds ignored; 2 documents that are not Kubernetes objects skipped; 3 paths excluded; 2 kustomizations rendered)",
				"note: facts from .karpenter-guard/cluster-facts.yaml (for the manifests of . and below)",
				"note: Helm chart charts/app skipped",
				"DENY [node-role-not-authorized] kustomize/base/legacy.yaml:8 spec.role",
			},
			notContains: []string{"role-patch.yaml", "ci.yaml", "terraform/templates"},
		},
		{
			name: "subdirectory takes the snapshot of the repository root", args: []string{"check", "-f", "karpenter"}, code: 0,
			contains:    []string{"note: facts from .karpenter-guard/cluster-facts.yaml (for the manifests of . and below)", "2 objects checked"},
			notContains: []string{"no facts"},
		},
		{
			name: "kustomize overlays at their sources", args: []string{"check", "-k", "kustomize/overlays/prod", "-k", "kustomize/overlays/staging"}, code: 1,
			golden: "reporoot-kustomize.txt",
			contains: []string{
				// Patched by the overlay: reported at its patches.
				`EC2NodeClass "default" (kustomize/overlays/prod/kustomization.yaml:8)`,
				"DENY [node-role-access-entry-type] kustomize/overlays/prod/kustomization.yaml:8 spec.role",
				// Renamed and labelled only: at the base file's line.
				"DENY [node-role-not-authorized] kustomize/base/legacy.yaml:8 spec.role",
				`EC2NodeClass "staging-legacy" (kustomize/base/legacy.yaml:1)`,
			},
			notContains: []string{"config.kubernetes.io/origin"},
		},
		{
			name: "exclude", args: []string{"check", "-f", ".", "--exclude", "kustomize/**", "--exclude", "values.yaml"}, code: 0,
			contains:    []string{"2 objects checked (1 of other kinds ignored; 1 document that is not a Kubernetes object skipped; 4 paths excluded)"},
			notContains: []string{"legacy"},
		},
		{
			name: "without the ignore file the Terraform template is an input error", args: []string{"check", "-f", "."}, code: 2,
			edits:    map[string]string{".karpenter-guard-ignore": ""},
			contains: []string{"terraform/templates/nodeclass.yaml:6: invalid YAML"},
		},
		{
			name: "a malformed ignore line is an input error at its line", args: []string{"check", "-f", "."}, code: 2,
			edits:    map[string]string{".karpenter-guard-ignore": "terraform/templates/\n[unclosed\n"},
			contains: []string{".karpenter-guard-ignore:2: malformed glob"},
		},
		{
			name: "--facts replaces the facts home", args: []string{"check", "-f", "karpenter", "--facts", ".karpenter-guard/cluster-facts.yaml"}, code: 0,
			notContains: []string{"note: facts from"},
		},
		{
			name: "only a snapshot belongs in the facts home", args: []string{"check", "-f", "karpenter"}, code: 2,
			edits:    map[string]string{".karpenter-guard/cluster-facts.yaml": "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: x}\nspec: {}\n"},
			contains: []string{`.karpenter-guard/cluster-facts.yaml:1: NodePool "x" in .karpenter-guard: only a ClusterFacts snapshot belongs there`},
		},
		{
			name: "a kustomization that does not build", args: []string{"check", "-f", ".", "-k", "kustomize/broken"}, code: 2, absolute: true,
			contains: []string{"error: kustomize build kustomize/broken: ", "kustomize/broken/nodeclass.yaml: no such file or directory"},
		},
		{
			name: "-k needs a kustomization", args: []string{"check", "-k", "karpenter"}, code: 2,
			contains: []string{"error: kustomize build karpenter: no kustomization.yaml, kustomization.yml or Kustomization in the directory"},
		},
		{
			name: "-k cannot be fixed in place", args: []string{"check", "-k", "kustomize/overlays/prod", "--diff"}, code: 2,
			contains: []string{"objects rendered from -k cannot be written back"},
		},
		{
			name: "malformed --exclude", args: []string{"check", "-f", ".", "--exclude", "[a"}, code: 2,
			contains: []string{`--exclude: malformed glob "[a"`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := copyRepository(t, tc.edits)
			code, out, stderr := cli(t, "", tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s%s", code, tc.code, out, stderr)
			}
			all := out + stderr
			checkOutput(t, all, tc.contains, tc.notContains)
			if !tc.absolute && strings.Contains(all, root) {
				t.Errorf("output names the temporary directory instead of paths relative to the repository:\n%s", all)
			}
			if tc.golden != "" {
				golden.Compare(t, filepath.Join(goldenDir, tc.golden), out+"---\n"+stderr, *update)
			}
		})
	}
}

// checkOutput fails the test when the output lacks one of contains or has one of notContains.
func checkOutput(t *testing.T, all string, contains, notContains []string) {
	t.Helper()
	for _, want := range contains {
		if !strings.Contains(all, want) {
			t.Errorf("output lacks %q:\n%s", want, all)
		}
	}
	for _, not := range notContains {
		if strings.Contains(all, not) {
			t.Errorf("output has %q:\n%s", not, all)
		}
	}
}
