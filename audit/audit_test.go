package audit_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/karpenter-guard/karpenter-guard/audit"
	"github.com/karpenter-guard/karpenter-guard/cluster"
	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/rules"
)

func unstructuredOf(t *testing.T, gvk schema.GroupVersionKind, name string, spec map[string]any) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(gvk)
	u.SetName(name)
	return u
}

func nodeClass(t *testing.T, name string, spec map[string]any) *unstructured.Unstructured {
	base := map[string]any{
		"amiSelectorTerms":           []any{map[string]any{"alias": "al2023@latest"}},
		"role":                       "KarpenterNodeRole",
		"subnetSelectorTerms":        []any{map[string]any{"tags": map[string]any{"a": "b"}}},
		"securityGroupSelectorTerms": []any{map[string]any{"tags": map[string]any{"a": "b"}}},
	}
	for k, v := range spec {
		base[k] = v
	}
	return unstructuredOf(t, cluster.EC2NodeClassGVK, name, base)
}

func fakeClient(objs ...client.Object) *fake.ClientBuilder {
	return fake.NewClientBuilder().WithObjects(objs...)
}

// TestListAndRun: the audit reads classes, pools and aws-auth through paged lists, keeps an object it
// cannot read as a problem that names it, and evaluates the rest with check's rules.
func TestListAndRun(t *testing.T) {
	var objs []client.Object
	for i := 0; i < 1201; i++ { // more than two pages
		objs = append(objs, nodeClass(t, fmt.Sprintf("class-%04d", i), nil))
	}
	objs = append(objs,
		nodeClass(t, "arn-profile", map[string]any{"role": nil, "instanceProfile": "arn:aws:iam::111122223333:instance-profile/p"}),
		nodeClass(t, "unreadable", map[string]any{"role": []any{"a", "b"}}),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "aws-auth", Namespace: "kube-system"}, Data: map[string]string{"mapRoles": "- rolearn: x\n"}},
	)
	c := fakeClient(objs...).Build()
	got, err := audit.List(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.NodeClasses) != 1202 || got.AWSAuth == nil {
		t.Fatalf("%d classes, aws-auth %v", len(got.NodeClasses), got.AWSAuth != nil)
	}
	if len(got.Problems) != 1 || got.Problems[0].File != "cluster/EC2NodeClass/unreadable" || !strings.Contains(got.Problems[0].Message, "expected a string, found a list") {
		t.Errorf("problems %+v", got.Problems)
	}
	o := audit.Run(context.Background(), rules.Default(), config.Default(), facts.None{}, got)
	rules := map[string]bool{}
	for _, f := range o.Findings {
		rules[f.Object.Name+"/"+f.Rule] = true
	}
	if !rules["arn-profile/instance-profile-arn"] || !rules["aws-auth/aws-auth-malformed"] {
		t.Errorf("findings %v", rules)
	}
	if !o.Partial {
		t.Errorf("without facts the outcome must say it is partial")
	}
}

// TestListWithoutCRDs: a cluster without Karpenter's CRDs is said plainly.
func TestListWithoutCRDs(t *testing.T) {
	c := fakeClient().WithInterceptorFuncs(interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			return &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass"}, SearchedVersions: []string{"v1"}}
		},
	}).Build()
	_, err := audit.List(context.Background(), c)
	if err == nil || !strings.Contains(err.Error(), "the cluster serves no karpenter.k8s.aws/v1 EC2NodeClass: are Karpenter's v1 CRDs installed?") {
		t.Errorf("List = %v", err)
	}
}

func outcome(t *testing.T, n int, mode config.Mode) *audit.Outcome {
	t.Helper()
	var objs []client.Object
	for i := 0; i < n; i++ {
		objs = append(objs, nodeClass(t, fmt.Sprintf("c-%04d", i), map[string]any{"metadataOptions": map[string]any{"httpTokens": "optional"},
			"role": nil, "instanceProfile": "arn:aws:iam::111122223333:instance-profile/p"}))
	}
	got, err := audit.List(context.Background(), fakeClient(objs...).Build())
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Mode = mode
	return audit.Run(context.Background(), rules.Default(), cfg, facts.None{}, got)
}

// TestReports: one result per finding (fail for deny, warn for warn), errors for rules not evaluated,
// marked partial, passes for the rules that ran and found nothing; in mode dry-run denials say they
// would have been denied; past 500 results the cluster report is split.
func TestReports(t *testing.T) {
	o := outcome(t, 1, config.ModeDryRun)
	reps := audit.Reports(o, config.ModeDryRun, time.Unix(1700000000, 0))
	if len(reps) != 2 || reps[0].Kind != "ClusterPolicyReport" || reps[1].Kind != "PolicyReport" || reps[1].Namespace != "kube-system" {
		t.Fatalf("reports %v", reps)
	}
	cp := reps[0]
	var fail, warn, errs, pass int
	for _, r := range cp.Results {
		switch r.Result {
		case "fail":
			fail++
			if !strings.HasPrefix(r.Message, "(would have been denied) ") || r.Properties[audit.WouldDenyProperty] != "true" {
				t.Errorf("dry-run denial not marked: %+v", r)
			}
		case "warn":
			warn++
		case "error":
			errs++
			if !strings.HasPrefix(r.Message, "not evaluated: no facts: ") {
				t.Errorf("error without its reason: %+v", r)
			}
		case "pass":
			pass++
			if r.Policy == "instance-profile-arn" || r.Policy == "imds-v1-enabled" || r.Policy == "node-role-not-authorized" {
				t.Errorf("a pass for a rule that found something or did not run: %+v", r)
			}
		}
		if r.Source != "karpenter-guard" || r.Policy == "" || len(r.Resources) != 1 || r.Resources[0].Name != "c-0000" || r.Timestamp.Seconds != 1700000000 {
			t.Errorf("result %+v", r)
		}
	}
	if fail != 1 || warn != 1 || errs == 0 || pass == 0 || cp.Summary.Fail != 1 || cp.Summary.Warn != 1 || cp.Summary.Error != errs || cp.Summary.Pass != pass {
		t.Errorf("fail %d warn %d error %d pass %d, summary %+v", fail, warn, errs, pass, cp.Summary)
	}
	if cp.Annotations[audit.PartialAnnotation] != "true" || cp.Annotations[audit.ModeAnnotation] != "dry-run" {
		t.Errorf("annotations %v", cp.Annotations)
	}
	big := audit.Reports(outcome(t, 300, config.ModeEnforce), config.ModeEnforce, time.Now())
	if len(big) < 3 || big[1].Name != "karpenter-guard-2" {
		t.Errorf("%d reports for 300 objects with several results each", len(big))
	}
	for _, r := range big {
		if len(r.Results) > 500 {
			t.Errorf("%s holds %d results", r.Name, len(r.Results))
		}
	}
}

// TestProblemsInReports: an object the audit could not read, and an aws-auth it was not allowed to
// read, are error results on that object with the reason, and the reports say they are partial even
// when every rule that ran had its facts.
func TestProblemsInReports(t *testing.T) {
	c := fakeClient(nodeClass(t, "unreadable", map[string]any{"role": []any{"a", "b"}})).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*corev1.ConfigMap); ok {
				return apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, key.Name, errors.New("RBAC: access denied"))
			}
			return c.Get(ctx, key, obj, opts...)
		},
	}).Build()
	objs, err := audit.List(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	o := audit.Run(context.Background(), rules.Default(), config.Default(), facts.None{}, objs)
	if len(o.NotEvaluated) != 0 || len(o.Problems) != 2 || !o.Partial {
		t.Fatalf("not evaluated %d, problems %+v, partial %v; want 0, 2, true", len(o.NotEvaluated), o.Problems, o.Partial)
	}
	reps := audit.Reports(o, config.ModeEnforce, time.Now())
	want := map[string]string{
		"ClusterPolicyReport/karpenter-guard":               "karpenter.k8s.aws/v1 EC2NodeClass unreadable: not audited: EC2NodeClass \"unreadable\": spec.role: expected a string, found a list",
		"PolicyReport/kube-system/karpenter-guard-aws-auth": "v1 ConfigMap kube-system/aws-auth: not audited: cannot read kube-system/aws-auth: ",
	}
	for _, r := range reps {
		key := r.Kind + "/" + r.Name
		if r.Namespace != "" {
			key = r.Kind + "/" + r.Namespace + "/" + r.Name
		}
		if r.Annotations[audit.PartialAnnotation] != "true" || r.Summary.Error != 1 || len(r.Results) != 1 {
			t.Errorf("%s: annotations %v, summary %+v, %d results", key, r.Annotations, r.Summary, len(r.Results))
			continue
		}
		res := r.Results[0]
		ref := res.Resources[0]
		name := ref.Name
		if ref.Namespace != "" {
			name = ref.Namespace + "/" + ref.Name
		}
		got := ref.APIVersion + " " + ref.Kind + " " + name + ": " + res.Message
		if res.Result != "error" || res.Policy != audit.ReadPolicy || !strings.HasPrefix(got, want[key]) {
			t.Errorf("%s: %s result %q; want error %q", key, res.Result, got, want[key])
		}
	}
}

// TestWriteReportsReplaces: writing replaces the reports whole and deletes chunks no longer needed, so a
// fixed object's results disappear.
func TestWriteReportsReplaces(t *testing.T) {
	ctx := context.Background()
	c := fakeClient().Build()
	if err := audit.WriteReports(ctx, c, audit.Reports(outcome(t, 300, config.ModeEnforce), config.ModeEnforce, time.Now())); err != nil {
		t.Fatal(err)
	}
	if n := countClusterReports(t, c); n < 3 {
		t.Fatalf("%d cluster reports", n)
	}
	if err := audit.WriteReports(ctx, c, audit.Reports(outcome(t, 1, config.ModeEnforce), config.ModeEnforce, time.Now())); err != nil {
		t.Fatal(err)
	}
	if n := countClusterReports(t, c); n != 1 {
		t.Errorf("%d cluster reports after the cluster shrank, want 1", n)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(audit.ClusterPolicyReportGVK)
	if err := c.Get(ctx, client.ObjectKey{Name: "karpenter-guard"}, u); err != nil {
		t.Fatal(err)
	}
	results, _, _ := unstructured.NestedSlice(u.Object, "results")
	for _, r := range results {
		if name := r.(map[string]any)["resources"].([]any)[0].(map[string]any)["name"]; name != "c-0000" {
			t.Errorf("a result of an object that is gone: %v", name)
		}
	}
}

func countClusterReports(t *testing.T, c client.Client) int {
	t.Helper()
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(audit.ClusterPolicyReportGVK.GroupVersion().WithKind("ClusterPolicyReportList"))
	if err := c.List(context.Background(), l); err != nil {
		t.Fatal(err)
	}
	return len(l.Items)
}

// TestWriteReportsErrors: missing CRDs and missing RBAC are said with what to do.
func TestWriteReportsErrors(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: "wgpolicyk8s.io", Kind: "ClusterPolicyReport"}}, "the cluster has no wgpolicyk8s.io/v1alpha2 report CRDs: install manifests/crds"},
		{apierrors.NewForbidden(schema.GroupResource{Group: "wgpolicyk8s.io", Resource: "clusterpolicyreports"}, "karpenter-guard", errors.New("RBAC")), "not allowed: grant get, list, create, update and delete on policyreports and clusterpolicyreports"},
	} {
		c := fakeClient().WithInterceptorFuncs(interceptor.Funcs{
			Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
				return tc.err
			},
		}).Build()
		err := audit.WriteReports(context.Background(), c, audit.Reports(outcome(t, 1, config.ModeEnforce), config.ModeEnforce, time.Now()))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("WriteReports = %v, want %q", err, tc.want)
		}
	}
}

// noting is a provider that notes every aws-auth question and every role lookup, as the live provider
// notes answers served stale.
type noting struct {
	facts.Provider
	awsAuth atomic.Int32
}

func (n *noting) AWSAuth(ctx context.Context) (*facts.AWSAuthData, error) {
	n.awsAuth.Add(1)
	return n.Provider.AWSAuth(ctx)
}

func (n *noting) Role(ctx context.Context, name string) (*facts.Role, error) {
	facts.Note(ctx, "used a cached answer for iam:GetRole")
	return n.Provider.Role(ctx, name)
}

// TestRunEvaluatesOnce: an audit of many objects is one evaluation: a note is said once (not once per
// batch of objects), progress reaches the total, and aws-auth is answered from the copy the audit
// read with the objects, not asked of the provider again.
func TestRunEvaluatesOnce(t *testing.T) {
	var objs []client.Object
	for i := 0; i < 600; i++ {
		objs = append(objs, nodeClass(t, fmt.Sprintf("class-%04d", i), nil))
	}
	objs = append(objs, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "aws-auth", Namespace: "kube-system"},
		Data: map[string]string{"mapRoles": "- rolearn: arn:aws:iam::111122223333:role/KarpenterNodeRole\n  username: system:node:{{EC2PrivateDNSName}}\n  groups: [system:bootstrappers, system:nodes]\n"}})
	listed, err := audit.List(context.Background(), fakeClient(objs...).Build())
	if err != nil {
		t.Fatal(err)
	}
	snap := facts.NewSnapshot(&facts.ClusterFacts{Cluster: &facts.Cluster{Name: "prod-eks", Region: "us-east-1", Partition: "aws",
		AccountID: "111122223333", Version: "1.33", AuthenticationMode: facts.ModeConfigMap},
		Roles: &[]facts.Role{{Name: "KarpenterNodeRole", ARN: "arn:aws:iam::111122223333:role/KarpenterNodeRole"}}})
	p := &noting{Provider: snap}
	var last, total int
	o := audit.RunWithProgress(context.Background(), rules.Default(), config.Default(), p, listed, func(done, n int) { last, total = done, n })
	if len(o.Notes) != 1 {
		t.Errorf("notes %q; want the one note once", o.Notes)
	}
	if last != 601 || total != 601 {
		t.Errorf("progress ended at %d of %d; want 601 of 601", last, total)
	}
	if n := p.awsAuth.Load(); n != 0 {
		t.Errorf("the provider was asked for aws-auth %d times; the audit had read it", n)
	}
	for _, f := range o.Findings {
		if f.Rule == "node-role-not-authorized" {
			t.Errorf("the role mapped in the audited aws-auth is reported: %+v", f)
			break
		}
	}
}

// TestReportsClipLongTexts: skip reasons of 200 KiB and 20 KiB, and a long fix, become texts of at most
// 1 KiB that say they were clipped and where to read them whole; the short ones are kept as they are.
func TestReportsClipLongTexts(t *testing.T) {
	ref := func(name string) objects.Ref {
		return objects.Ref{APIVersion: "karpenter.k8s.aws/v1", Kind: "EC2NodeClass", Name: name}
	}
	o := &audit.Outcome{}
	o.Skipped = append(o.Skipped, validators.Skipped{Rule: "imds-v1-enabled", Object: ref("huge"), Reason: "karpenter-guard.io/skip: " + strings.Repeat("x", 200<<10)})
	for i := 0; i < 10; i++ {
		o.Skipped = append(o.Skipped, validators.Skipped{Rule: "imds-v1-enabled", Object: ref(fmt.Sprintf("long-%d", i)), Reason: "karpenter-guard.io/skip: " + strings.Repeat("y", 20<<10)})
	}
	o.Skipped = append(o.Skipped, validators.Skipped{Rule: "imds-v1-enabled", Object: ref("short"), Reason: "karpenter-guard.io/skip: legacy AMI"})
	o.Findings = append(o.Findings, validators.Finding{Rule: "instance-profile-arn", Action: config.ActionDeny, Object: ref("fix-too-long"),
		Field: "spec.instanceProfile", Message: "spec.instanceProfile is an ARN", Fix: strings.Repeat("z", 5000)})
	reps := audit.Reports(o, config.ModeEnforce, time.Now())
	if len(reps) != 2 || len(reps[0].Results) != 13 {
		t.Fatalf("%d reports, the first with %d results; want 2, 13", len(reps), len(reps[0].Results))
	}
	const clipped = "(clipped from "
	for _, r := range reps[0].Results {
		name := r.Resources[0].Name
		texts := map[string]string{"message": r.Message}
		for k, v := range r.Properties {
			texts[k] = v
		}
		for what, text := range texts {
			long := name == "huge" || strings.HasPrefix(name, "long-") && what == "message" || name == "fix-too-long" && what == "fix"
			switch {
			case len(text) > 1024:
				t.Errorf("%s: %s of %d bytes", name, what, len(text))
			case long && !strings.HasSuffix(text, "bytes; `karpenter-guard audit` prints it whole)"):
				t.Errorf("%s: %s not said to be clipped: …%s", name, what, text[max(0, len(text)-80):])
			case !long && strings.Contains(text, clipped):
				t.Errorf("%s: short %s clipped: %q", name, what, text)
			}
		}
		if name == "huge" && !strings.HasPrefix(r.Message, "karpenter-guard.io/skip: xxx") {
			t.Errorf("the clipped skip reason does not begin as the reason: %.60q", r.Message)
		}
		if name == "short" && r.Message != "karpenter-guard.io/skip: legacy AMI" {
			t.Errorf("short reason %q", r.Message)
		}
	}
}

// writesCount returns karpenter_guard_report_writes_total by outcome.
func writesCount(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "karpenter_guard_report_writes_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "outcome" {
					out[l.GetValue()] = m.GetCounter().GetValue()
				}
			}
		}
	}
	return out
}

// storedReport is a report already in the cluster: ours when labels say so, with a summary that tells
// whether it was overwritten.
func storedReport(kind, namespace, name string, labels map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"summary": map[string]any{"pass": int64(42)}}}
	u.SetAPIVersion(audit.ClusterPolicyReportGVK.GroupVersion().String())
	u.SetKind(kind)
	u.SetNamespace(namespace)
	u.SetName(name)
	u.SetLabels(labels)
	return u
}

// TestReportWriter: every report is attempted even when one cannot be written; each failure is
// logged with the report's name, counted, and joined into the error. Only reports carrying our label
// are replaced or deleted: a report of another tool, or one under our name without our label, is left
// as it is (and the latter is an error that says what to do). Reports to delete are listed by label.
func TestReportWriter(t *testing.T) {
	o := outcome(t, 40, config.ModeEnforce)
	o.Passed = nil // the writer's business is the reports, not their results: keep their number fixed
	reports := audit.Reports(o, config.ModeEnforce, time.Now())
	if len(reports) != 4 { // karpenter-guard, -2, -3 and the aws-auth report
		t.Fatalf("%d reports, want 4", len(reports))
	}
	ourLabel := map[string]string{audit.ManagedByLabel: audit.ManagedBy}
	kyverno := map[string]string{audit.ManagedByLabel: "kyverno"}
	const cpr, pr = "ClusterPolicyReport", "PolicyReport"
	for _, tc := range []struct {
		name     string
		existing []client.Object
		funcs    interceptor.Funcs
		// kept are the reports, "Kind/namespace/name", that must still be there unchanged; gone, those
		// that must not be there.
		kept, gone []string
		ok, errs   float64  // karpenter_guard_report_writes_total by outcome
		failed     []string // the names of the reports not written or deleted, as logged
		wantErr    []string
	}{
		{
			name: "a refused write does not stop the others",
			funcs: interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				if obj.GetName() == "karpenter-guard-2" {
					return apierrors.NewRequestEntityTooLargeError("limit is 3145728")
				}
				return c.Create(ctx, obj, opts...)
			}},
			gone: []string{cpr + "//karpenter-guard-2"},
			ok:   3, errs: 1,
			failed:  []string{"karpenter-guard-2"},
			wantErr: []string{`create ClusterPolicyReport "karpenter-guard-2": Request entity too large: limit is 3145728`},
		},
		{
			name: "our name without our label",
			existing: []client.Object{storedReport(cpr, "", "karpenter-guard", nil),
				storedReport(pr, "kube-system", "karpenter-guard-aws-auth", map[string]string{"app": "other"})},
			kept: []string{cpr + "//karpenter-guard", pr + "/kube-system/karpenter-guard-aws-auth"},
			ok:   2, errs: 2,
			failed: []string{"karpenter-guard", "karpenter-guard-aws-auth"},
			wantErr: []string{`write ClusterPolicyReport "karpenter-guard": a report of that name exists without the label app.kubernetes.io/managed-by=karpenter-guard`,
				`write PolicyReport "kube-system/karpenter-guard-aws-auth": a report of that name exists without the label`, "delete or rename it"},
		},
		{
			name: "stale reports: ours deleted, others' kept",
			existing: []client.Object{
				storedReport(cpr, "", "karpenter-guard-9", ourLabel),
				storedReport(cpr, "", "karpenter-guard-10", nil),
				storedReport(cpr, "", "kyverno-cluster", kyverno),
				storedReport(pr, "kube-system", "karpenter-guard-aws-auth-2", ourLabel),
				storedReport(pr, "kube-system", "karpenter-guard-aws-auth-3", kyverno),
				storedReport(pr, "kube-system", "karpenter-guard-aws-auth-4", ourLabel),
			},
			kept: []string{cpr + "//karpenter-guard-10", cpr + "//kyverno-cluster", pr + "/kube-system/karpenter-guard-aws-auth-3"},
			gone: []string{cpr + "//karpenter-guard-9", pr + "/kube-system/karpenter-guard-aws-auth-2", pr + "/kube-system/karpenter-guard-aws-auth-4"},
			ok:   4 + 3, // the reports and the stale ones
		},
		{
			name: "an aws-auth chunk left after a gap is deleted too",
			existing: []client.Object{
				storedReport(pr, "kube-system", "karpenter-guard-aws-auth-3", ourLabel),
			},
			gone: []string{pr + "/kube-system/karpenter-guard-aws-auth-3"},
			ok:   4 + 1,
		},
		{
			name:     "listed by label",
			existing: []client.Object{storedReport(cpr, "", "kyverno-cluster", kyverno)},
			funcs: interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
				lo := (&client.ListOptions{}).ApplyOptions(opts)
				if lo.LabelSelector == nil || lo.LabelSelector.String() != "app.kubernetes.io/managed-by=karpenter-guard" {
					return fmt.Errorf("listed reports with selector %v", lo.LabelSelector)
				}
				return c.List(ctx, list, opts...)
			}},
			kept: []string{cpr + "//kyverno-cluster"},
			ok:   4,
		},
		{
			name: "a refused deletion does not stop the others",
			existing: []client.Object{storedReport(cpr, "", "karpenter-guard-8", ourLabel), storedReport(cpr, "", "karpenter-guard-9", ourLabel),
				storedReport(pr, "kube-system", "karpenter-guard-aws-auth-2", ourLabel)},
			funcs: interceptor.Funcs{Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
				if obj.GetName() == "karpenter-guard-8" {
					return apierrors.NewForbidden(schema.GroupResource{Group: "wgpolicyk8s.io", Resource: "clusterpolicyreports"}, obj.GetName(), errors.New("RBAC"))
				}
				return c.Delete(ctx, obj, opts...)
			}},
			kept: []string{cpr + "//karpenter-guard-8"},
			gone: []string{cpr + "//karpenter-guard-9", pr + "/kube-system/karpenter-guard-aws-auth-2"},
			ok:   4 + 2, errs: 1,
			failed:  []string{"karpenter-guard-8"},
			wantErr: []string{`delete ClusterPolicyReport "karpenter-guard-8": not allowed: grant`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			c := fakeClient(tc.existing...).WithInterceptorFuncs(tc.funcs).Build()
			reg := prometheus.NewRegistry()
			m, err := audit.NewMetrics(reg)
			if err != nil {
				t.Fatal(err)
			}
			var logged []string
			log := funcr.New(func(prefix, args string) { logged = append(logged, args) }, funcr.Options{})
			err = (&audit.ReportWriter{Client: c, Metrics: m, Log: log}).Write(ctx, reports)

			if len(tc.wantErr) == 0 && err != nil {
				t.Errorf("Write = %v", err)
			}
			for _, want := range tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("Write = %v, want %q", err, want)
				}
			}
			for _, name := range tc.failed {
				if !slices.ContainsFunc(logged, func(l string) bool {
					return strings.Contains(l, `"msg"="policy report write failed" "error"=`) && strings.Contains(l, `"name"="`+name+`"`)
				}) {
					t.Errorf("no error logged for %s: %q", name, logged)
				}
			}
			if len(logged) != len(tc.failed) {
				t.Errorf("%d lines logged for %d failures: %q", len(logged), len(tc.failed), logged)
			}
			writes := writesCount(t, reg)
			if want := map[string]float64{"ok": tc.ok, "error": tc.errs}; !maps.Equal(writes, want) {
				t.Errorf("report writes %v, want %v", writes, want)
			}
			notOurs := map[string]bool{}
			for _, k := range append(tc.kept, tc.gone...) {
				notOurs[k] = true
			}
			for _, r := range reports {
				key := r.Kind + "/" + r.Namespace + "/" + r.Name
				if notOurs[key] {
					continue
				}
				u := getReport(t, c, r.Kind, r.Namespace, r.Name)
				if u == nil || u.GetLabels()[audit.ManagedByLabel] != audit.ManagedBy {
					t.Errorf("%s not written", key)
				} else if got, _, _ := unstructured.NestedSlice(u.Object, "results"); len(got) != len(r.Results) {
					t.Errorf("%s holds %d results, want %d", key, len(got), len(r.Results))
				}
			}
			for _, k := range tc.kept {
				parts := strings.Split(k, "/")
				u := getReport(t, c, parts[0], parts[1], parts[2])
				if u == nil {
					t.Errorf("%s was deleted", k)
				} else if pass, _, _ := unstructured.NestedInt64(u.Object, "summary", "pass"); pass != 42 {
					t.Errorf("%s was overwritten: summary %v", k, u.Object["summary"])
				}
			}
			for _, k := range tc.gone {
				parts := strings.Split(k, "/")
				if u := getReport(t, c, parts[0], parts[1], parts[2]); u != nil {
					t.Errorf("%s is there", k)
				}
			}
		})
	}
}

// getReport reads a report (nil when there is none).
func getReport(t *testing.T, c client.Client, kind, namespace, name string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(audit.ClusterPolicyReportGVK.GroupVersion().WithKind(kind))
	err := c.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, u)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return u
}
