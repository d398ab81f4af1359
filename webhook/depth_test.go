package webhook_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/karpenter-guard/karpenter-guard/webhook"
)

// TestReviewOfHostileInput: the webhook reads objects as JSON, whose decoders refuse nesting deeper
// than 10,000 levels, and aws-auth's mapRoles as YAML, whose aliases yaml.v2 bounds: an object nested
// 9,000 or 100,000 levels deep, and an aws-auth whose mapRoles is a "billion laughs" or an anchor
// inside itself, each get an AdmissionReview back instead of crashing the webhook.
func TestReviewOfHostileInput(t *testing.T) {
	nested := func(depth int) string {
		return strings.Repeat(`{"a":`, depth) + `"x"` + strings.Repeat("}", depth)
	}
	class := func(tags string) string {
		return `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"1","kind":{"group":"karpenter.k8s.aws","version":"v1","kind":"EC2NodeClass"},` +
			`"resource":{"group":"karpenter.k8s.aws","version":"v1","resource":"ec2nodeclasses"},"name":"deep","operation":"CREATE",` +
			`"object":{"apiVersion":"karpenter.k8s.aws/v1","kind":"EC2NodeClass","metadata":{"name":"deep"},"spec":{"role":"r","amiSelectorTerms":[{"alias":"al2023@latest"}],"tags":` + tags + `}}}}`
	}
	var laughs strings.Builder
	laughs.WriteString("- rolearn: arn:aws:iam::111122223333:role/n\n  username: system:node:{{EC2PrivateDNSName}}\n  groups: &a0 [system:nodes]\n  x:\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&laughs, "    a%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d,", i-1), 9), ","))
	}
	awsAuth := func(mapRoles string) string {
		v, _ := json.Marshal(mapRoles)
		return `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"2","kind":{"group":"","version":"v1","kind":"ConfigMap"},` +
			`"resource":{"group":"","version":"v1","resource":"configmaps"},"namespace":"kube-system","name":"aws-auth","operation":"CREATE",` +
			`"object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"aws-auth","namespace":"kube-system"},"data":{"mapRoles":` + string(v) + `}}}}`
	}
	r := reviewer(t, nil, nil, fixedCluster{})
	limits := webhook.DefaultLimits()
	validate := webhook.Guard(&ctrlwebhook.Admission{Handler: admission.HandlerFunc(r.Validate)}, limits)
	mutate := webhook.Guard(&ctrlwebhook.Admission{Handler: admission.HandlerFunc(r.Mutate)}, limits)
	for _, tc := range []struct {
		name, body string
		allowed    bool   // the validating answer
		msg        string // in its message
	}{
		// Within the JSON limits: read and reviewed (no rule reads the tags; the API server's schema
		// refuses tags that are not strings).
		{"object nested 9,000 levels", class(nested(9000)), true, ""},
		{"object nested 100,000 levels", class(nested(100000)), false, "exceeded max depth"},
		{"aws-auth billion laughs", awsAuth(laughs.String()), false, "excessive aliasing"},
		{"aws-auth anchor inside itself", awsAuth("- &e {rolearn: a, username: b, <<: *e}\n"), false, "value contains itself"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i, h := range []http.Handler{validate, mutate} {
				req := httptest.NewRequest(http.MethodPost, "/validate", bytes.NewReader([]byte(tc.body)))
				req.Header.Set("Content-Type", "application/json")
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				var out admissionv1.AdmissionReview
				if err := json.Unmarshal(rec.Body.Bytes(), &out); rec.Code != http.StatusOK || err != nil || out.Response == nil {
					t.Fatalf("status %d, not an AdmissionReview: %v %.300s", rec.Code, err, rec.Body)
				}
				if i == 0 {
					msg := ""
					if out.Response.Result != nil {
						msg = out.Response.Result.Message
					}
					if out.Response.Allowed != tc.allowed || !strings.Contains(msg, tc.msg) {
						t.Errorf("allowed %v, message %.300q; want allowed %v and …%s…", out.Response.Allowed, msg, tc.allowed, tc.msg)
					}
				}
			}
		})
	}
}
