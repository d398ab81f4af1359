package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRepositoryRoot: check at the root of a typical GitOps repository (a Helm chart with templates, a
// values file, a kustomization, Karpenter manifests) reports the manifests' findings and exits 0 or 1,
// never 2: files that are not Kubernetes objects are skipped and counted, the chart is skipped with a
// note saying how to check it.
func TestRepositoryRoot(t *testing.T) {
	root := t.TempDir()
	for path, text := range map[string]string{
		"charts/app/Chart.yaml":                "apiVersion: v2\nname: app\nversion: 0.1.0\n",
		"charts/app/values.yaml":               "replicaCount: 2\n",
		"charts/app/templates/deployment.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n{{- if .Values.x }}\n",
		"values.yaml":                          "global:\n  region: us-east-1\n",
		"clusters/prod/kustomization.yaml":     "resources:\n- karpenter.yaml\n",
		"clusters/prod/karpenter.yaml":         cleanPool,
	} {
		p := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	code, out, stderr := cli(t, "", "check", "-f", root)
	if code != 0 {
		t.Errorf("exit %d, want 0\n%s%s", code, out, stderr)
	}
	if !strings.Contains(out, "2 objects checked (2 documents that are not Kubernetes objects skipped)") {
		t.Errorf("the summary does not count what was skipped:\n%s", out)
	}
	if want := "note: Helm chart " + filepath.Join(root, "charts", "app") + " skipped"; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
}
