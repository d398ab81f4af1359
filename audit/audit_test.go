package audit_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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
	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/live"
	"github.com/karpenter-guard/karpenter-guard/validators"
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
	return unstructuredOf(t, live.EC2NodeClassGVK, name, base)
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
	o := audit.Run(context.Background(), validators.Default(), config.Default(), facts.None{}, got)
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
	return audit.Run(context.Background(), validators.Default(), cfg, facts.None{}, got)
}

// TestReports: one result per finding (fail for deny, warn for warn), errors for rules not evaluated,
// marked partial; in mode dry-run denials say they would have been denied; past 500 results the
// cluster report is split.
func TestReports(t *testing.T) {
	o := outcome(t, 1, config.ModeDryRun)
	reps := audit.Reports(o, config.ModeDryRun, time.Unix(1700000000, 0))
	if len(reps) != 2 || reps[0].Kind != "ClusterPolicyReport" || reps[1].Kind != "PolicyReport" || reps[1].Namespace != "kube-system" {
		t.Fatalf("reports %v", reps)
	}
	cp := reps[0]
	var fail, warn, errs int
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
			t.Errorf("a pass: %+v", r)
		}
		if r.Source != "karpenter-guard" || r.Policy == "" || len(r.Resources) != 1 || r.Resources[0].Name != "c-0000" || r.Timestamp.Seconds != 1700000000 {
			t.Errorf("result %+v", r)
		}
	}
	if fail != 1 || warn != 1 || errs == 0 || cp.Summary.Fail != 1 || cp.Summary.Warn != 1 || cp.Summary.Error != errs {
		t.Errorf("fail %d warn %d error %d, summary %+v", fail, warn, errs, cp.Summary)
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
	o := audit.Run(context.Background(), validators.Default(), config.Default(), facts.None{}, objs)
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
	o := audit.RunWithProgress(context.Background(), validators.Default(), config.Default(), p, listed, func(done, n int) { last, total = done, n })
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
