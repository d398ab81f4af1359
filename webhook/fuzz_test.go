package webhook_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/karpenter-guard/karpenter-guard/webhook"
)

// FuzzReview feeds arbitrary bodies to /validate and /mutate: every one gets an HTTP answer (an
// AdmissionReview, or a 4xx for bodies the guard refuses), never a crash.
func FuzzReview(f *testing.F) {
	for _, doc := range []string{classWithProblems, poolWithDeprecatedAnnotations} {
		for _, op := range []admissionv1.Operation{admissionv1.Create, admissionv1.Update, admissionv1.Delete} {
			old := ""
			if op != admissionv1.Create {
				old = doc
			}
			if op == admissionv1.Delete {
				doc = ""
			}
			b, _ := json.Marshal(reviewOf(f, op, doc, old, false))
			f.Add(b)
		}
	}
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"1","kind":{"group":"","version":"v1","kind":"ConfigMap"},"namespace":"kube-system","name":"aws-auth","operation":"UPDATE","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"aws-auth","namespace":"kube-system"},"data":{"mapRoles":"- rolearn: x"}},"oldObject":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"aws-auth","namespace":"kube-system"},"data":{"mapRoles":"[["}}}}`))
	f.Add([]byte(`{"request":{"kind":{"group":"karpenter.sh","version":"v1","kind":"NodePool"},"operation":"CREATE","object":{"kind":"NodePool","apiVersion":"karpenter.sh/v1","metadata":{"name":"a"},"spec":7}}}`))
	// The paths of objects it cannot read, and of an object being deleted.
	for _, pair := range [][2]string{{unreadableClass, readableClass}, {readableClass, unreadableClass}, {withAnnotation(unreadableClass, "b"), unreadableClass}} {
		b, _ := json.Marshal(reviewOf(f, admissionv1.Update, pair[0], pair[1], false))
		f.Add(b)
	}
	f.Add([]byte(`{"request":{"uid":"2","kind":{"group":"karpenter.k8s.aws","version":"v1","kind":"EC2NodeClass"},"operation":"UPDATE","object":{"apiVersion":"karpenter.k8s.aws/v1","kind":"EC2NodeClass","metadata":{"name":"a","deletionTimestamp":"2026-01-01T00:00:00Z"},"spec":{"role":[1]}},"oldObject":{"metadata":{"name":"a"},"spec":null}}}`))
	f.Add([]byte("{"))
	f.Add([]byte{})
	r := reviewer(f, nil, nil, fixedCluster{})
	limits := webhook.DefaultLimits()
	validate := webhook.Guard(&ctrlwebhook.Admission{Handler: admission.HandlerFunc(r.Validate)}, limits)
	mutate := webhook.Guard(&ctrlwebhook.Admission{Handler: admission.HandlerFunc(r.Mutate)}, limits)
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, h := range []http.Handler{validate, mutate} {
			req := httptest.NewRequest(http.MethodPost, "/validate", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d for a body the guard accepts: %s", rec.Code, rec.Body)
			}
			var out admissionv1.AdmissionReview
			if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || out.Response == nil {
				t.Fatalf("not an AdmissionReview: %v %s", err, rec.Body)
			}
		}
	})
}
