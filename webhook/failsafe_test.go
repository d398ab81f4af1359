package webhook_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/validators/rules"
	"github.com/karpenter-guard/karpenter-guard/webhook"
)

// A class whose spec.role has a type no Karpenter release gives it: what a Karpenter upgrade that
// widens a field looks like to an older karpenter-guard.
const (
	unreadableClass = `{"apiVersion":"karpenter.k8s.aws/v1","kind":"EC2NodeClass","metadata":{"name":"odd"},"spec":{"role":["a","b"],"amiSelectorTerms":[{"alias":"al2023@latest"}]}}`
	readableClass   = `{"apiVersion":"karpenter.k8s.aws/v1","kind":"EC2NodeClass","metadata":{"name":"odd","annotations":{"team":"a"}},"spec":{"role":"KarpenterNodeRole","amiSelectorTerms":[{"alias":"al2023@latest"}],"subnetSelectorTerms":[{"tags":{"a":"b"}}],"securityGroupSelectorTerms":[{"tags":{"a":"b"}}]}}`
)

// withAnnotation returns the JSON object with metadata.annotations.team set to v (a metadata-only
// change).
func withAnnotation(doc, v string) string {
	if strings.Contains(doc, `"annotations"`) {
		return strings.Replace(doc, `"team":"a"`, `"team":"`+v+`"`, 1)
	}
	return strings.Replace(doc, `"metadata":{"name":"odd"}`, `"metadata":{"name":"odd","annotations":{"team":"`+v+`"}}`, 1)
}

// TestUnreadableObjects: an object karpenter-guard cannot read is refused only in mode enforce and only
// when the request makes or changes its spec; otherwise it is allowed with a warning naming the field.
// A stored object that cannot be read never makes an edit fail.
func TestUnreadableObjects(t *testing.T) {
	otherSpec := strings.Replace(unreadableClass, `"al2023@latest"`, `"al2023@v20251112"`, 1)
	for _, tc := range []struct {
		name      string
		mode      string
		op        admissionv1.Operation
		doc, old  string
		path      string
		wantAllow bool
		wantWarn  bool // a warning naming the field
	}{
		{"create, enforce", "enforce", admissionv1.Create, unreadableClass, "", webhook.ValidatePath, false, false},
		{"create, warn", "warn", admissionv1.Create, unreadableClass, "", webhook.ValidatePath, true, true},
		{"create, dry-run", "dry-run", admissionv1.Create, unreadableClass, "", webhook.ValidatePath, true, false},
		{"spec change, enforce", "enforce", admissionv1.Update, otherSpec, unreadableClass, webhook.ValidatePath, false, false},
		{"metadata-only update, enforce", "enforce", admissionv1.Update, withAnnotation(unreadableClass, "b"), unreadableClass, webhook.ValidatePath, true, true},
		{"only the stored object is unreadable, enforce", "enforce", admissionv1.Update, readableClass, unreadableClass, webhook.ValidatePath, true, false},
		{"mutate, enforce", "enforce", admissionv1.Create, unreadableClass, "", webhook.MutatePath, true, false},
		{"mutate, stored object unreadable", "enforce", admissionv1.Update, readableClass, unreadableClass, webhook.MutatePath, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := startServer(t, reviewer(t, nil, parseConfig(t, "mode: "+tc.mode+"\naws:\n  onError: allow\n"), nil), webhook.DefaultLimits())
			resp := srv.post(t, tc.path, reviewOf(t, tc.op, tc.doc, tc.old, false))
			if resp.Allowed != tc.wantAllow {
				t.Fatalf("allowed=%v, want %v: %+v", resp.Allowed, tc.wantAllow, resp.Result)
			}
			const field = "spec.role: expected a string, found a list"
			if !resp.Allowed {
				first, _, _ := strings.Cut(resp.Result.Message, "\n")
				if resp.Result.Code != 403 || !strings.HasPrefix(first, `karpenter-guard: EC2NodeClass "odd" denied: cannot read the object: spec.role`) || !strings.Contains(first, field) {
					t.Errorf("denial %d %q: want a 403 naming the field", resp.Result.Code, resp.Result.Message)
				}
				return
			}
			warned := strings.Contains(strings.Join(resp.Warnings, "\n"), "[karpenter-guard] not checked: cannot read the object: ") &&
				strings.Contains(strings.Join(resp.Warnings, "\n"), field)
			if warned != tc.wantWarn {
				t.Errorf("warnings %q: want a warning naming the field: %v", resp.Warnings, tc.wantWarn)
			}
			if tc.mode == "dry-run" && !strings.HasPrefix(resp.AuditAnnotations["unread"], "would deny: cannot read the object: ") {
				t.Errorf("dry-run audit annotations %v: want the would-deny recorded", resp.AuditAnnotations)
			}
			if tc.path == webhook.MutatePath && len(resp.Patch) > 0 {
				t.Errorf("patched an object it could not read: %s", resp.Patch)
			}
		})
	}
}

// TestOnErrorDenyOnlyBlocksSpecChanges: with aws.onError deny and no facts to be had, a CREATE or a spec
// change of a Karpenter object is refused; aws-auth edits, metadata-only updates and the updates of an
// object being deleted are not.
func TestOnErrorDenyOnlyBlocksSpecChanges(t *testing.T) {
	cfg := parseConfig(t, "mode: enforce\naws:\n  onError: deny\n")
	srv := startServer(t, reviewer(t, nil, cfg, nil), webhook.DefaultLimits())
	deleting := strings.Replace(readableClass, `"metadata":{"name":"odd",`, `"metadata":{"name":"odd","deletionTimestamp":"2026-11-23T10:00:00Z","finalizers":["karpenter.k8s.aws/termination"],`, 1)
	finalizerGone := strings.Replace(deleting, `"finalizers":["karpenter.k8s.aws/termination"],`, ``, 1)
	// An object being deleted is let through even with a problem the rules would deny.
	deletingBroken := strings.Replace(finalizerGone, `"alias":"al2023@latest"`, `"name":"amazon-eks-node-*"`, 1)
	specChange := strings.Replace(readableClass, `"al2023@latest"`, `"al2023@v20251112"`, 1)
	awsAuth := func(user string) string {
		return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"aws-auth","namespace":"kube-system"},"data":{"mapUsers":"- userarn: arn:aws:iam::111122223333:user/` + user + `\n  username: ` + user + `\n  groups: [ops]\n"}}`
	}
	for _, tc := range []struct {
		name      string
		op        admissionv1.Operation
		doc, old  string
		wantAllow bool
	}{
		{"create", admissionv1.Create, readableClass, "", false},
		{"spec change", admissionv1.Update, specChange, readableClass, false},
		{"metadata-only update", admissionv1.Update, withAnnotation(readableClass, "b"), readableClass, true},
		{"finalizer removed while deleting", admissionv1.Update, finalizerGone, deleting, true},
		{"spec of an object being deleted", admissionv1.Update, deletingBroken, deleting, true},
		{"aws-auth edit", admissionv1.Update, awsAuth("b"), awsAuth("a"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := srv.post(t, webhook.ValidatePath, reviewOf(t, tc.op, tc.doc, tc.old, false))
			if resp.Allowed != tc.wantAllow {
				msg := ""
				if resp.Result != nil {
					msg = resp.Result.Message
				}
				t.Fatalf("allowed=%v, want %v: %s %q", resp.Allowed, tc.wantAllow, msg, resp.Warnings)
			}
			if !resp.Allowed && !strings.Contains(resp.Result.Message, "could not verify [") {
				t.Errorf("refused for another reason than aws.onError: %s", resp.Result.Message)
			}
		})
	}
}

// TestMetricsCardinality: reviews of made-up kinds and operations, which any client that reaches the
// webhook can send, add no series: they are counted as "other".
func TestMetricsCardinality(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := webhook.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	r := webhook.NewReviewer(rules.Default(), config.Default(), facts.None{}, nil, m, logr.Discard())
	series := func() int {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, mf := range mfs {
			n += len(mf.GetMetric())
		}
		return n
	}
	made := func(i int) admission.Request {
		return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
			UID:       "x",
			Kind:      metav1.GroupVersionKind{Group: fmt.Sprintf("g%d.example.com", i), Version: "v1", Kind: fmt.Sprintf("Kind%d", i)},
			Name:      fmt.Sprintf("n%d", i),
			Operation: admissionv1.Operation(fmt.Sprintf("OP%d", i)),
		}}
	}
	r.Validate(context.Background(), made(-1))
	r.Mutate(context.Background(), made(-2))
	before := series()
	for i := range 10_000 {
		if i%2 == 0 {
			r.Validate(context.Background(), made(i))
		} else {
			r.Mutate(context.Background(), made(i))
		}
	}
	if after := series(); after != before {
		t.Errorf("10,000 reviews of made-up kinds took the series from %d to %d", before, after)
	}
	if got := testutil.ToFloat64(mustCounter(t, reg, "karpenter_guard_admission_requests_total", map[string]string{"kind": "other", "operation": "other", "decision": "allow"})); got != 10_002 {
		t.Errorf(`admission_requests_total{kind="other",operation="other",decision="allow"} = %v, want 10002`, got)
	}
}

// TestDeletingABrokenAWSAuth: deleting an aws-auth ConfigMap that is malformed, or that karpenter-guard
// cannot read at all, is never refused for what it holds (only for the node roles its deletion would
// drop, which these map none of).
func TestDeletingABrokenAWSAuth(t *testing.T) {
	srv := startServer(t, reviewer(t, nil, parseConfig(t, "mode: enforce\naws:\n  onError: allow\n"), nil), webhook.DefaultLimits())
	cm := func(data string) string {
		return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"aws-auth","namespace":"kube-system"},"data":` + data + `}`
	}
	for _, tc := range []struct {
		name, stored, warning string
	}{
		{"malformed", cm(`{"mapRoles":"[["}`), ""},
		{"unreadable", cm(`5`), "[karpenter-guard] not checked: cannot read the stored object: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := srv.post(t, webhook.ValidatePath, reviewOf(t, admissionv1.Delete, "", tc.stored, false))
			if !resp.Allowed || !strings.HasPrefix(strings.Join(resp.Warnings, "\n"), tc.warning) {
				t.Errorf("allowed=%v warnings %q %+v: want allowed, warned %q", resp.Allowed, resp.Warnings, resp.Result, tc.warning)
			}
		})
	}
}
