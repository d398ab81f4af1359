//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"github.com/karpenter-guard/karpenter-guard/crds"
	"github.com/karpenter-guard/karpenter-guard/manifest"
	"github.com/karpenter-guard/karpenter-guard/objects"
)

// crdSchemaInputs are the files whose Karpenter objects the offline validation and the API server
// must judge alike: the hand-made cases, the bundled examples and the real-world corpus.
var crdSchemaInputs = []string{
	filepath.Join("testdata", "crdschema.yaml"),
	filepath.Join("..", "examples"),
	filepath.Join("..", "testdata", "realworld"),
}

// TestCRDValidationMatchesTheAPIServer: for every v1 NodePool and EC2NodeClass of crdSchemaInputs,
// karpenter-guard's offline validation (package crds, what karpenter-crd-invalid reports) refuses the
// object exactly when a server-side dry-run `kubectl apply` (strict field validation, kubectl's
// default) refuses it against the real Karpenter CRDs, and every field it names is one the API
// server names. The built-in CRDs are also checked to be the ones the suite installed.
func TestCRDValidationMatchesTheAPIServer(t *testing.T) {
	env.removeWebhooks(t) // the API server alone judges
	set, err := crds.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	requireBuiltInCRDsInstalled(t)
	var paths []string
	for _, in := range crdSchemaInputs {
		if _, err := os.Stat(in); err == nil {
			paths = append(paths, in)
		}
	}
	read := manifest.Reader{}.Read(context.Background(), paths)
	dir := t.TempDir()
	checked, refused := 0, 0
	for _, o := range read.Objects {
		if (o.Kind != objects.KindNodePool && o.Kind != objects.KindEC2NodeClass) || len(set.Served(o.Group(), o.Kind)) == 0 || o.Version() != "v1" {
			continue
		}
		content, err := o.Content()
		if err != nil {
			t.Errorf("%s: %v", o.Ref(), err)
			continue
		}
		res, ok, err := set.Validate(context.Background(), content)
		if err != nil || !ok {
			t.Errorf("%s: validate: ok=%v err=%v", o.Ref(), ok, err)
			continue
		}
		// The object's own text, so that kubectl converts the YAML itself.
		text, err := objectText(o)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, "object.yaml")
		if err := os.WriteFile(file, text, 0o600); err != nil {
			t.Fatal(err)
		}
		r := env.kubectl(t, "", "apply", "--dry-run=server", "-f", file)
		ours := len(res.Errors) + len(res.UnknownFields)
		checked++
		if r.code != 0 {
			refused++
		}
		switch {
		case r.code == 0 && ours > 0:
			t.Errorf("%s (%s): the API server accepts it, karpenter-guard refuses it: unknown %v, errors %v", o.Ref(), o.File, res.UnknownFields, res.Errors)
		case r.code != 0 && ours == 0:
			t.Errorf("%s (%s): the API server refuses it, karpenter-guard accepts it:\n%s", o.Ref(), o.File, r.stderr)
		}
		for _, f := range res.UnknownFields {
			if !strings.Contains(r.stderr, `unknown field "`+f+`"`) {
				t.Errorf("%s: karpenter-guard says unknown field %q; the API server says:\n%s", o.Ref(), f, r.stderr)
			}
		}
		for _, e := range res.Errors {
			// With unknown fields a strict apply stops at decoding and names only those; karpenter-guard
			// also says what validation will refuse once they are gone.
			if len(res.UnknownFields) == 0 && !strings.Contains(r.stderr, e.Field) {
				t.Errorf("%s: karpenter-guard names %s (%s); the API server says:\n%s", o.Ref(), e.Field, e.Error(), r.stderr)
			}
		}
	}
	t.Logf("%d objects judged alike by the API server and karpenter-guard, %d of them refused", checked, refused)
	if checked < 30 || refused < 15 {
		t.Errorf("only %d objects checked, %d refused: the inputs lost their cases", checked, refused)
	}
}

// objectText renders one object of a manifest as YAML.
func objectText(o *objects.Object) ([]byte, error) {
	var b bytes.Buffer
	n := o.Fields.Node()
	enc := yaml.NewEncoder(&b)
	if err := enc.Encode(n); err != nil {
		return nil, err
	}
	return b.Bytes(), enc.Close()
}

// requireBuiltInCRDsInstalled checks that the CRDs built into karpenter-guard are byte for byte the
// ones the suite installed (the Karpenter release of e2e/tools/tools.mk), less the header comment.
func requireBuiltInCRDsInstalled(t *testing.T) {
	t.Helper()
	for _, f := range []string{"karpenter.sh_nodepools.yaml", "karpenter.k8s.aws_ec2nodeclasses.yaml"} {
		installed, err := os.ReadFile(filepath.Join(os.Getenv("KARPENTER_CRDS"), f))
		if err != nil {
			t.Fatal(err)
		}
		built, err := os.ReadFile(filepath.Join("..", "crds", "karpenter", f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasSuffix(built, installed) {
			t.Errorf("crds/karpenter/%s is not the installed %s: run `make karpenter-crds`", f, f)
		}
	}
}

// TestFixedExamplesApply: after `karpenter-guard check --fix`, every Karpenter object of the examples
// (the v1beta1 field report converted) is one the API server accepts against the real Karpenter CRDs:
// a server-side dry-run apply of each succeeds.
func TestFixedExamplesApply(t *testing.T) {
	env.removeWebhooks(t)
	dir := filepath.Join(t.TempDir(), "examples")
	if out, err := exec.Command("cp", "-r", filepath.Join("..", "examples"), dir).CombinedOutput(); err != nil {
		t.Fatalf("copy the examples: %v\n%s", err, out)
	}
	out, err := exec.Command(env.guardBin, "check", "-f", dir, "--fix", "--quiet").CombinedOutput()
	if !strings.Contains(string(out), "findings fixed") {
		t.Fatalf("check --fix: %v\n%s", err, out)
	}
	read := manifest.Reader{}.Read(context.Background(), []string{dir})
	applied := 0
	for _, o := range read.Objects {
		if !objects.IsKarpenterGroup(o.APIVersion) {
			continue
		}
		if o.Version() != "v1" {
			t.Errorf("%s: still %s after --fix", o.Ref(), o.APIVersion)
			continue
		}
		text, err := objectText(o)
		if err != nil {
			t.Fatal(err)
		}
		r := env.kubectl(t, string(text), "apply", "--dry-run=server", "-f", "-")
		if r.code != 0 {
			t.Errorf("%s (%s): the API server refuses the fixed object:\n%s\n%s", o.Ref(), o.File, r.stderr, text)
		}
		applied++
	}
	if applied < 10 {
		t.Errorf("only %d fixed Karpenter objects applied: the examples lost their objects", applied)
	}
}

// TestAuditValidatesAgainstTheClusterCRDs: the audit judges stored objects with the schemas the
// cluster serves (read with the webhook's own RBAC, so the in-cluster audit can too), and
// --karpenter-crds judges them with another release's: a stricter schema (weight at most 10) reports
// the stored pool of weight 50 that the installed one admitted.
func TestAuditValidatesAgainstTheClusterCRDs(t *testing.T) {
	dir := filepath.Join("..", "examples", "clusters", "config-map-mode")
	world(t, filepath.Join(dir, "cluster-facts.yaml"), "", filepath.Join(dir, "aws-auth.yaml"), filepath.Join(dir, "karpenter.yaml"))
	env.removeWebhooks(t)
	weighted := `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: weighted}
spec:
  weight: 50
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}]
`
	if r := env.kubectl(t, weighted, "apply", "-f", "-"); r.code != 0 {
		t.Fatalf("apply: %s", r.stderr)
	}
	t.Cleanup(func() { env.kubectl(t, "", "delete", "nodepool", "weighted", "--ignore-not-found") })

	stricter := t.TempDir()
	crd, err := os.ReadFile(filepath.Join("..", "crds", "karpenter", "karpenter.sh_nodepools.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	limited := strings.Replace(string(crd), "                  format: int32\n                  maximum: 100\n", "                  format: int32\n                  maximum: 10\n", 1)
	if limited == string(crd) {
		t.Fatal("the NodePool CRD no longer has weight's maximum: update the test")
	}
	if err := os.WriteFile(filepath.Join(stricter, "karpenter.sh_nodepools.yaml"), []byte(limited), 0o600); err != nil {
		t.Fatal(err)
	}

	audit := func(kubeconfig string, extra ...string) (findings []string, stderr string) {
		t.Helper()
		args := append([]string{"audit", "--kubeconfig", kubeconfig, "--facts", filepath.Join(dir, "cluster-facts.yaml"), "-o", "json"}, extra...)
		cmd := exec.Command(env.guardBin, args...)
		var errb strings.Builder
		cmd.Stderr = &errb
		out, _ := cmd.Output()
		var rep struct {
			Findings []struct {
				Rule    string
				Message string
				Object  struct{ Name string }
			}
		}
		if err := json.Unmarshal(out, &rep); err != nil {
			t.Fatalf("audit %v: %v\n%s%s", extra, err, out, errb.String())
		}
		for _, f := range rep.Findings {
			if f.Rule == "karpenter-crd-invalid" {
				findings = append(findings, f.Object.Name+": "+f.Message)
			}
		}
		return findings, errb.String()
	}
	for _, who := range []struct{ name, kubeconfig string }{{"admin", env.kubeconfig}, {"the webhook's service account", env.guardKube}} {
		got, stderr := audit(who.kubeconfig)
		if len(got) > 0 || strings.Contains(stderr, "built-in") {
			t.Errorf("as %s, against the cluster's CRDs: findings %v, stderr:\n%s", who.name, got, stderr)
		}
	}
	got, stderr := audit(env.kubeconfig, "--karpenter-crds", stricter)
	if len(got) != 1 || !strings.HasPrefix(got[0], "weighted: ") || !strings.Contains(got[0], "spec.weight") {
		t.Errorf("against a schema with weight at most 10: %v (want the weighted pool's spec.weight)\n%s", got, stderr)
	}
}
