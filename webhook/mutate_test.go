package webhook_test

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	admissionv1 "k8s.io/api/admission/v1"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/karpenter-guard/karpenter-guard/webhook"
)

// mutate posts a review to /mutate and returns the patched object (YAML) and the response.
func mutate(t *testing.T, srv *server, op admissionv1.Operation, doc, old string) (string, *admissionv1.AdmissionResponse) {
	t.Helper()
	ar := reviewOf(t, op, doc, old, false)
	resp := srv.post(t, webhook.MutatePath, ar)
	if !resp.Allowed {
		t.Fatalf("/mutate refused: %+v", resp.Result)
	}
	if len(resp.Patch) == 0 {
		return doc, resp
	}
	if resp.PatchType == nil || *resp.PatchType != admissionv1.PatchTypeJSONPatch {
		t.Fatalf("patch type %v", resp.PatchType)
	}
	p, err := jsonpatch.DecodePatch(resp.Patch)
	if err != nil {
		t.Fatalf("the patch is not a JSON patch: %v\n%s", err, resp.Patch)
	}
	out, err := p.Apply(ar.Request.Object.Raw)
	if err != nil {
		t.Fatalf("the patch does not apply: %v\n%s", err, resp.Patch)
	}
	y, err := sigsyaml.JSONToYAML(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(y), resp
}

func patchOps(t *testing.T, resp *admissionv1.AdmissionResponse) []map[string]any {
	t.Helper()
	var ops []map[string]any
	if len(resp.Patch) > 0 {
		if err := json.Unmarshal(resp.Patch, &ops); err != nil {
			t.Fatal(err)
		}
	}
	return ops
}

const poolWithDeprecatedAnnotations = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: batch
  annotations:
    compatibility.karpenter.sh/v1beta1-nodeclass-reference: '{"name":"default"}'
spec:
  template:
    metadata:
      annotations:
        karpenter.sh/do-not-consolidate: "true"
        team/owner: batch
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
  limits: {cpu: "100"}
`

// TestMutationFixesAndIsIdempotent: /mutate adds the AMI owner, turns the instance-profile ARN into its
// name, renames the deprecated annotation and drops the stale one; the patched object passes the rules
// those fixes answer, keeps every other field, and mutating it again patches nothing.
func TestMutationFixesAndIsIdempotent(t *testing.T) {
	cfg := parseConfig(t, "amiOwners:\n  allowed: [amazon, self]\n  defaultOwner: \"111122223333\"\n")
	srv := startServer(t, reviewer(t, nil, cfg, nil), webhook.DefaultLimits())
	for _, tc := range []struct {
		name, doc string
		want      []string // lines the patched object holds
		gone      []string // lines it no longer holds
		rules     []string // fixed rules named in the warnings
	}{
		{"node class", classWithProblems,
			[]string{"    owner: amazon", "    owner: \"111122223333\"", "  instanceProfile: KarpenterNodeInstanceProfile", "    httpTokens: optional"},
			[]string{"arn:aws:iam::111122223333:instance-profile/"},
			[]string{"ami-selector-missing-owner", "instance-profile-arn"}},
		{"node pool", poolWithDeprecatedAnnotations,
			[]string{`        karpenter.sh/do-not-disrupt: "true"`, "        team/owner: batch"},
			[]string{"do-not-consolidate", "compatibility.karpenter.sh"},
			[]string{"deprecated-disruption-annotation", "stale-compatibility-annotation"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			patched, resp := mutate(t, srv, admissionv1.Create, tc.doc, "")
			for _, w := range tc.want {
				if !strings.Contains(patched, w+"\n") {
					t.Errorf("patched object lacks %q:\n%s", w, patched)
				}
			}
			for _, g := range tc.gone {
				if strings.Contains(patched, g) {
					t.Errorf("patched object still holds %q:\n%s", g, patched)
				}
			}
			for _, r := range tc.rules {
				if !slices.ContainsFunc(resp.Warnings, func(w string) bool { return strings.HasPrefix(w, "["+r+"] fixed: ") }) {
					t.Errorf("no warning says %s was fixed: %q", r, resp.Warnings)
				}
				if resp.AuditAnnotations["fixed."+r] == "" {
					t.Errorf("no audit annotation for the fix of %s: %v", r, resp.AuditAnnotations)
				}
			}
			again, resp2 := mutate(t, srv, admissionv1.Create, patched, "")
			if ops := patchOps(t, resp2); len(ops) > 0 {
				t.Errorf("mutating the mutated object patched again: %v", ops)
			}
			if again != patched {
				t.Errorf("second mutation changed the object")
			}
			v := srv.post(t, webhook.ValidatePath, reviewOf(t, admissionv1.Create, patched, "", false))
			for _, r := range tc.rules {
				if slices.Contains(rulesOf(strings.Split(v.Result.Message, "\n")), r) || slices.Contains(rulesOf(v.Warnings), r) {
					t.Errorf("%s still fires on the mutated object", r)
				}
			}
		})
	}
}

// TestMutationIsIdempotentOnEveryExample: the property over every v1 object of the examples.
func TestMutationIsIdempotentOnEveryExample(t *testing.T) {
	srv := startServer(t, reviewer(t, nil, nil, nil), webhook.DefaultLimits())
	dirs, _ := filepath.Glob("../examples/*")
	dirs = append(dirs, "../examples/clusters/api-mode", "../examples/clusters/config-map-mode", "../examples/clusters/network-and-ami")
	n := 0
	for _, dir := range dirs {
		for _, o := range readDir(t, dir).Objects {
			if (o.NodeClass == nil && o.NodePool == nil) || o.Version() != "v1" {
				continue
			}
			once, _ := mutate(t, srv, admissionv1.Create, source(t, o), "")
			twice, resp := mutate(t, srv, admissionv1.Create, once, "")
			if ops := patchOps(t, resp); len(ops) > 0 || twice != once {
				t.Errorf("%s: mutate(mutate(x)) patched %v", o.Ref(), ops)
			}
			n++
		}
	}
	if n < 10 {
		t.Errorf("only %d objects", n)
	}
}

// TestMutationOnUpdateTouchesOnlyChangedFields: an UPDATE that does not touch an AMI term gets no owner
// added to it (Karpenter would see drift and replace every node of the class); one that edits the term
// gets the fix.
func TestMutationOnUpdateTouchesOnlyChangedFields(t *testing.T) {
	srv := startServer(t, reviewer(t, nil, nil, nil), webhook.DefaultLimits())
	stored := classWithProblems
	labelled := strings.Replace(stored, "metadata:\n  name: default\n", "metadata:\n  name: default\n  labels: {team: a}\n", 1)
	patched, resp := mutate(t, srv, admissionv1.Update, labelled, stored)
	if ops := patchOps(t, resp); len(ops) > 0 {
		t.Errorf("an UPDATE of a label patched untouched fields: %v", ops)
	}
	if patched != labelled {
		t.Errorf("object changed")
	}
	if resp.AuditAnnotations["not-fixed.ami-selector-missing-owner"] == "" {
		t.Errorf("the skipped fix is not recorded: %v", resp.AuditAnnotations)
	}
	edited := strings.Replace(stored, "name: amazon-eks-node-al2023-x86_64-standard-1.33-*", "name: amazon-eks-node-al2023-x86_64-standard-1.34-*", 1)
	patched, _ = mutate(t, srv, admissionv1.Update, edited, stored)
	if !strings.Contains(patched, "1.34-*\n    owner: amazon\n") {
		t.Errorf("the edited term got no owner:\n%s", patched)
	}
	if strings.Contains(patched, "platform-team-base-*\n    owner:") {
		t.Errorf("the untouched term got an owner:\n%s", patched)
	}
	if !strings.Contains(patched, "instanceProfile: arn:aws:iam::") {
		t.Errorf("the untouched instanceProfile was rewritten:\n%s", patched)
	}
}

// TestMutationInDryRunPatchesNothing: mode dry-run records what it would fix.
func TestMutationInDryRunPatchesNothing(t *testing.T) {
	srv := startServer(t, reviewer(t, nil, parseConfig(t, "mode: dry-run\n"), nil), webhook.DefaultLimits())
	_, resp := mutate(t, srv, admissionv1.Create, classWithProblems, "")
	if ops := patchOps(t, resp); len(ops) > 0 || len(resp.Warnings) > 0 {
		t.Errorf("dry-run patched %v, warned %q", ops, resp.Warnings)
	}
	if !strings.Contains(resp.AuditAnnotations["would-fix.instance-profile-arn"], "instanceProfile: KarpenterNodeInstanceProfile") {
		t.Errorf("annotations %v", resp.AuditAnnotations)
	}
}
