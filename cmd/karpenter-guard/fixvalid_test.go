package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFixOfEveryExampleIsAcceptedAndStable is the property --fix keeps over every example and the
// real-world corpus: it never writes an object the API server would refuse for a reason the input did
// not have (such an object is left as it was, with a note; check --fix would exit 2 if that did not
// settle), and a second --fix changes nothing.
func TestFixOfEveryExampleIsAcceptedAndStable(t *testing.T) {
	dir := t.TempDir()
	for _, src := range []string{"../../examples", "../../testdata/realworld"} {
		if _, err := os.Stat(src); err != nil {
			continue
		}
		copyTree(t, src, filepath.Join(dir, filepath.Base(src)))
	}
	before := schemaFindings(t, dir)
	code, out, stderr := cli(t, "", "check", "-f", dir, "--fix", "--quiet")
	if code == 2 || strings.Contains(stderr, "--fix wrote nothing") {
		t.Fatalf("--fix exit %d\n%s%s", code, out, stderr)
	}
	if !strings.Contains(out, "findings fixed") {
		t.Errorf("--fix fixed nothing in the examples (the v1beta1 field report alone has fixes):\n%s", out)
	}
	for f := range schemaFindings(t, dir) {
		if !before[f] {
			t.Errorf("after --fix the API server would refuse what it accepted before: %s", f)
		}
	}
	if !strings.Contains(stderr, "not fixed: once fixed, the API server would refuse it") {
		t.Errorf("no object of the corpus was left unfixed with a note (its v1beta1 files hold values v1 refuses):\n%s", stderr)
	}
	code, diff, stderr := cli(t, "", "check", "-f", dir, "--diff")
	if code != 0 || diff != "" {
		t.Errorf("a second --fix would change the files again (exit %d):\n%s%s", code, diff, stderr)
	}
}

// schemaFindings returns the karpenter-crd-invalid findings of check on dir: file, object and message.
func schemaFindings(t *testing.T, dir string) map[string]bool {
	t.Helper()
	_, out, _ := cli(t, "", "check", "-f", dir, "-o", "json")
	var rep struct {
		Findings []struct {
			Rule, Message string
			Object        struct{ File, Kind, Name string }
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("check -o json: %v", err)
	}
	found := map[string]bool{}
	for _, f := range rep.Findings {
		if f.Rule == "karpenter-crd-invalid" {
			found[f.Object.File+" "+f.Object.Kind+"/"+f.Object.Name+": "+f.Message] = true
		}
	}
	return found
}

// copyTree copies the regular files under src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if p == filepath.Join(src, "SOURCES.yaml") || p == filepath.Join(src, "expected.yaml") {
			return nil // the corpus's records, not manifests
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestKarpenterCRDsFlag: --karpenter-crds validates against the CRDs of a directory, and a directory
// without any is refused with what is wrong, before any file is checked.
func TestKarpenterCRDsFlag(t *testing.T) {
	inRepoRoot(t)
	code, out, stderr := cli(t, "", "check", "-f", "examples/production", "--karpenter-crds", "crds/karpenter")
	if code != 0 || strings.Contains(out, "karpenter-crd-invalid") {
		t.Errorf("against the built-in release's CRDs given as a directory: exit %d\n%s%s", code, out, stderr)
	}
	empty := t.TempDir()
	code, _, stderr = cli(t, "", "check", "-f", "examples/production", "--karpenter-crds", empty)
	if code != 2 || !strings.Contains(stderr, "--karpenter-crds: read CRDs from "+empty+": no CustomResourceDefinition found") {
		t.Errorf("a directory without CRDs: exit %d\n%s", code, stderr)
	}
}
