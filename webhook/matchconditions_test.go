package webhook_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/cel/environment"
	sigsyaml "sigs.k8s.io/yaml"
)

// TestMatchConditions evaluates the matchConditions of manifests/base/webhooks.yaml with the API
// server's own matcher, under failurePolicy Fail (mode enforce, where an expression that errors
// refuses the request): what must never wait for karpenter-guard is not sent, what it must see is,
// and no object shape makes an expression fail.
func TestMatchConditions(t *testing.T) {
	data, err := os.ReadFile("../manifests/base/webhooks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var conditions [][]admissionregistrationv1.MatchCondition
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var cfg struct {
			Webhooks []admissionregistrationv1.ValidatingWebhook `json:"webhooks"`
		}
		if err := sigsyaml.Unmarshal([]byte(doc), &cfg); err != nil {
			t.Fatal(err)
		}
		for _, w := range cfg.Webhooks {
			if strings.HasPrefix(w.Name, "karpenter.") {
				conditions = append(conditions, w.MatchConditions)
			}
		}
	}
	if len(conditions) != 2 || !slices.Equal(conditions[0], conditions[1]) {
		t.Fatalf("the validating and mutating webhooks of Karpenter's kinds must carry the same matchConditions: %v", conditions)
	}
	var exprs []cel.ExpressionAccessor
	for _, c := range conditions[0] {
		exprs = append(exprs, &matchconditions.MatchCondition{Name: c.Name, Expression: c.Expression})
	}
	compiler := cel.NewConditionCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	evaluator := compiler.CompileCondition(exprs, cel.OptionalVariableDeclarations{HasAuthorizer: true}, environment.StoredExpressions)
	for _, err := range evaluator.CompilationErrors() {
		t.Fatalf("compile: %v", err)
	}
	fail := admissionregistrationv1.Fail
	matcher := matchconditions.NewMatcher(evaluator, &fail, "webhook", "validating", "karpenter.validate.karpenter-guard.io")

	const (
		admin     = "kubernetes-admin"
		karpenter = "system:serviceaccount:karpenter:karpenter"
	)
	class := func(metadata, spec string) string {
		doc := `{"apiVersion":"karpenter.k8s.aws/v1","kind":"EC2NodeClass","metadata":{"name":"default"` + metadata + `}`
		if spec != "" {
			doc += `,"spec":` + spec
		}
		return doc + "}"
	}
	spec := `{"role":"KarpenterNodeRole","amiSelectorTerms":[{"alias":"al2023@latest"}]}`
	pinned := `{"role":"KarpenterNodeRole","amiSelectorTerms":[{"alias":"al2023@v20251112"}]}`
	plain := class("", spec)
	for _, tc := range []struct {
		name     string
		op       admission.Operation
		user     string
		obj, old string
		sent     bool
	}{
		{"a CREATE", admission.Create, admin, plain, "", true},
		{"a CREATE by Karpenter", admission.Create, "system:serviceaccount:kube-system:karpenter", plain, "", false},
		{"a spec change", admission.Update, admin, class("", pinned), plain, true},
		{"a spec change by Karpenter", admission.Update, karpenter, class("", pinned), plain, false},
		{"Karpenter's hash annotation", admission.Update, karpenter, class(`,"annotations":{"karpenter.k8s.aws/ec2nodeclass-hash":"1"}`, spec), plain, false},
		{"a label", admission.Update, admin, class(`,"labels":{"team":"a"}`, spec), plain, false},
		{"another annotation", admission.Update, admin, class(`,"annotations":{"team":"a"}`, spec), plain, false},
		{"a finalizer removed", admission.Update, admin, plain, class(`,"finalizers":["karpenter.k8s.aws/termination"]`, spec), false},
		{"an exception added", admission.Update, admin, class(`,"annotations":{"karpenter-guard.io/skip":"subnet-public"}`, spec), plain, true},
		{"an exception changed", admission.Update, admin, class(`,"annotations":{"karpenter-guard.io/skip":"a"}`, spec), class(`,"annotations":{"karpenter-guard.io/skip":"b"}`, spec), true},
		{"an exception unchanged, another annotation added", admission.Update, admin, class(`,"annotations":{"karpenter-guard.io/skip":"a","team":"a"}`, spec), class(`,"annotations":{"karpenter-guard.io/skip":"a"}`, spec), false},
		{"a stale compatibility annotation removed", admission.Update, admin, plain, class(`,"annotations":{"compatibility.karpenter.k8s.aws/v1-alias-version":"1"}`, spec), true},
		{"the spec of an object being deleted", admission.Update, admin, class(`,"deletionTimestamp":"2026-11-23T10:00:00Z"`, pinned), class(`,"deletionTimestamp":"2026-11-23T10:00:00Z"`, spec), false},
		{"annotations null", admission.Update, admin, class(`,"annotations":null`, spec), class(`,"annotations":{"karpenter-guard.io/skip":"a"}`, spec), true},
		{"annotations null before", admission.Update, admin, class(`,"annotations":{"team":"a"}`, spec), class(`,"annotations":null`, spec), false},
		{"no spec either side", admission.Update, admin, class(`,"labels":{"a":"b"}`, ""), class("", ""), false},
		{"a spec added", admission.Update, admin, plain, class("", ""), true},
		{"a spec of null", admission.Update, admin, class("", "null"), plain, true},
		{"a DELETE", admission.Delete, admin, "", plain, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			decode := func(s string) runtime.Object {
				if s == "" {
					return nil
				}
				u := &unstructured.Unstructured{}
				if err := u.UnmarshalJSON([]byte(s)); err != nil {
					t.Fatal(err)
				}
				return u
			}
			gvk := schema.GroupVersionKind{Group: "karpenter.k8s.aws", Version: "v1", Kind: "EC2NodeClass"}
			attr := admission.NewAttributesRecord(decode(tc.obj), decode(tc.old), gvk, "", "default",
				gvk.GroupVersion().WithResource("ec2nodeclasses"), "", tc.op, nil, false, &user.DefaultInfo{Name: tc.user})
			versioned, err := admission.NewVersionedAttributes(attr, gvk, nil)
			if err != nil {
				t.Fatal(err)
			}
			res := matcher.Match(context.Background(), versioned, nil, nil)
			if res.Error != nil {
				t.Fatalf("the matchConditions failed (mode enforce would refuse the request): %v", res.Error)
			}
			if res.Matches != tc.sent {
				t.Errorf("sent to the webhook: %v, want %v (condition %q)", res.Matches, tc.sent, res.FailedConditionName)
			}
		})
	}
}
