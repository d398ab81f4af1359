package audit

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts/live"
	"github.com/karpenter-guard/karpenter-guard/objects"
)

// The Policy Report API of the Kubernetes Policy WG (wgpolicyk8s.io/v1alpha2), which Policy Reporter, Argo
// CD extensions and `kubectl get polr,cpolr` read. The types below are the part of it karpenter-guard
// writes. They are written here rather than imported: the maintained Go types live in Kyverno's module
// (api/policyreport/v1alpha2), whose 400 requirements would come with them; the CRDs in
// manifests/crds are copied unchanged from that module (`make report-crds`).
var (
	PolicyReportGVK        = schema.GroupVersionKind{Group: "wgpolicyk8s.io", Version: "v1alpha2", Kind: "PolicyReport"}
	ClusterPolicyReportGVK = schema.GroupVersionKind{Group: "wgpolicyk8s.io", Version: "v1alpha2", Kind: "ClusterPolicyReport"}
)

// Report is a PolicyReport or ClusterPolicyReport.
type Report struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Summary           Summary  `json:"summary"`
	Results           []Result `json:"results,omitempty"`
}

// Summary counts a report's results by status.
type Summary struct {
	Pass  int `json:"pass"`
	Fail  int `json:"fail"`
	Warn  int `json:"warn"`
	Error int `json:"error"`
	Skip  int `json:"skip"`
}

// Result is one finding (or a rule that could not be evaluated, or a skip) on one object.
type Result struct {
	Source     string                   `json:"source"`
	Policy     string                   `json:"policy"`
	Rule       string                   `json:"rule,omitempty"`
	Resources  []corev1.ObjectReference `json:"resources,omitempty"`
	Message    string                   `json:"message,omitempty"`
	Result     string                   `json:"result,omitempty"`
	Scored     bool                     `json:"scored,omitempty"`
	Properties map[string]string        `json:"properties,omitempty"`
	Timestamp  metav1.Timestamp         `json:"timestamp,omitempty"`
	Category   string                   `json:"category,omitempty"`
	Severity   string                   `json:"severity,omitempty"`
}

// Report names and labels. Cluster-scoped results are split into reports of at most maxResults, so that
// a large cluster's report stays far below the API server's object size limit.
const (
	ReportName        = "karpenter-guard"
	AWSAuthReportName = "karpenter-guard-aws-auth"
	ManagedByLabel    = "app.kubernetes.io/managed-by"
	ManagedBy         = "karpenter-guard"
	PartialAnnotation = "karpenter-guard.io/partial"
	ModeAnnotation    = "karpenter-guard.io/mode"
	WouldDenyProperty = "wouldBeDenied"
	maxResults        = 500
	resultSource      = "karpenter-guard"
)

// Reports builds the reports of an outcome: ClusterPolicyReports for the cluster-scoped EC2NodeClasses and
// NodePools (one, or several past maxResults results), a PolicyReport in kube-system for aws-auth.
// Findings are fail (deny) or warn; rules that could not be evaluated are error, with the reason, never
// pass; skips are skip. In mode dry-run a deny finding is marked as what enforcement would have denied.
func Reports(o *Outcome, mode config.Mode, now time.Time) []*Report {
	ts := metav1.Timestamp{Seconds: now.Unix()}
	var cluster, awsAuth []Result
	add := func(ref objects.Ref, r Result) {
		r.Source, r.Timestamp = resultSource, ts
		r.Resources = []corev1.ObjectReference{objectReference(ref)}
		r.Category = ref.Kind
		if ref.Namespace != "" {
			awsAuth = append(awsAuth, r)
		} else {
			cluster = append(cluster, r)
		}
	}
	for _, f := range o.Findings {
		r := Result{Policy: f.Rule, Rule: f.Rule, Message: f.Message, Scored: true, Properties: map[string]string{"action": string(f.Action)}}
		if f.Field != "" {
			r.Properties["field"] = f.Field
		}
		if f.Fix != "" {
			r.Properties["fix"] = f.Fix
		}
		switch f.Action {
		case config.ActionDeny:
			r.Result, r.Severity = "fail", "high"
			if mode == config.ModeDryRun {
				r.Message = "(would have been denied) " + r.Message
				r.Properties[WouldDenyProperty] = "true"
			}
		case config.ActionWarn:
			r.Result, r.Severity = "warn", "medium"
		default:
			r.Result, r.Severity = "warn", "low"
		}
		add(f.Object, r)
	}
	for _, n := range o.NotEvaluated {
		add(n.Object, Result{Policy: n.Rule, Rule: n.Rule, Result: "error", Message: "not evaluated: " + n.Reason})
	}
	for _, s := range o.Skipped {
		add(s.Object, Result{Policy: s.Rule, Rule: s.Rule, Result: "skip", Message: s.Reason})
	}
	for _, p := range o.Problems {
		add(problemRef(p.File), Result{Policy: ReadPolicy, Rule: ReadPolicy, Result: "error", Message: "not audited: " + p.Message})
	}
	sortResults(cluster)
	sortResults(awsAuth)
	var out []*Report
	for i := 0; i == 0 || i*maxResults < len(cluster); i++ {
		name := ReportName
		if i > 0 {
			name += "-" + strconv.Itoa(i+1)
		}
		chunk := cluster[i*maxResults : min((i+1)*maxResults, len(cluster))]
		out = append(out, newReport(ClusterPolicyReportGVK, "", name, chunk, o.Partial, mode))
	}
	out = append(out, newReport(PolicyReportGVK, objects.AWSAuthNamespace, AWSAuthReportName, awsAuth, o.Partial, mode))
	return out
}

func newReport(gvk schema.GroupVersionKind, namespace, name string, results []Result, partial bool, mode config.Mode) *Report {
	r := &Report{
		TypeMeta: metav1.TypeMeta{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace,
			Labels:      map[string]string{ManagedByLabel: ManagedBy},
			Annotations: map[string]string{PartialAnnotation: strconv.FormatBool(partial), ModeAnnotation: string(mode)}},
		Results: results,
	}
	for _, res := range results {
		switch res.Result {
		case "fail":
			r.Summary.Fail++
		case "warn":
			r.Summary.Warn++
		case "error":
			r.Summary.Error++
		case "skip":
			r.Summary.Skip++
		}
	}
	return r
}

// ReadPolicy is the policy of a report result for an object the audit could not read (a field of the
// wrong type, an object no rule could be run on): an error, so that it is not mistaken for passing.
const ReadPolicy = "karpenter-guard-read"

// problemRef is the object a problem's File ("cluster/Kind/name", "cluster/ConfigMap/namespace/name")
// names.
func problemRef(file string) objects.Ref {
	parts := strings.Split(strings.TrimPrefix(file, "cluster/"), "/")
	ref := objects.Ref{Kind: parts[0]}
	switch {
	case len(parts) == 3:
		ref.Namespace, ref.Name = parts[1], parts[2]
	case len(parts) == 2:
		ref.Name = parts[1]
	}
	switch ref.Kind {
	case objects.KindEC2NodeClass:
		ref.APIVersion = live.EC2NodeClassGVK.GroupVersion().String()
	case objects.KindNodePool:
		ref.APIVersion = live.NodePoolGVK.GroupVersion().String()
	case "ConfigMap":
		ref.APIVersion = "v1"
	}
	return ref
}

func objectReference(ref objects.Ref) corev1.ObjectReference {
	return corev1.ObjectReference{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name, Namespace: ref.Namespace}
}

func sortResults(rs []Result) {
	sort.SliceStable(rs, func(i, j int) bool {
		a, b := rs[i].Resources[0], rs[j].Resources[0]
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return rs[i].Policy < rs[j].Policy
	})
}

// WriteReports replaces karpenter-guard's reports in the cluster with reports: each is created or
// updated whole, and a cluster report chunk no longer needed is deleted, so a fixed object's results
// disappear. A cluster without the report CRDs, or RBAC that does not allow writing them, is an error
// that says so.
func WriteReports(ctx context.Context, c client.Client, reports []*Report) error {
	keep := map[string]bool{}
	for _, r := range reports {
		keep[r.Namespace+"/"+r.Name] = true
		if err := put(ctx, c, r); err != nil {
			return err
		}
	}
	old := &unstructured.UnstructuredList{}
	old.SetGroupVersionKind(ClusterPolicyReportGVK.GroupVersion().WithKind(ClusterPolicyReportGVK.Kind + "List"))
	if err := c.List(ctx, old, client.MatchingLabels{ManagedByLabel: ManagedBy}); err != nil {
		return reportError("list ClusterPolicyReports", err)
	}
	for i := range old.Items {
		if !keep["/"+old.Items[i].GetName()] {
			if err := c.Delete(ctx, &old.Items[i]); err != nil && !apierrors.IsNotFound(err) {
				return reportError("delete ClusterPolicyReport "+old.Items[i].GetName(), err)
			}
		}
	}
	return nil
}

// put creates or replaces one report.
func put(ctx context.Context, c client.Client, r *Report) error {
	u, err := toUnstructured(r)
	if err != nil {
		return err
	}
	u.SetGroupVersionKind(r.GroupVersionKind())
	cur := &unstructured.Unstructured{}
	cur.SetGroupVersionKind(r.GroupVersionKind())
	err = c.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: r.Name}, cur)
	switch {
	case apierrors.IsNotFound(err):
		if err := c.Create(ctx, u); err != nil {
			return reportError("create "+r.Kind+" "+r.Name, err)
		}
		return nil
	case err != nil:
		return reportError("get "+r.Kind+" "+r.Name, err)
	}
	u.SetResourceVersion(cur.GetResourceVersion())
	if err := c.Update(ctx, u); err != nil {
		return reportError("update "+r.Kind+" "+r.Name, err)
	}
	return nil
}

func reportError(what string, err error) error {
	switch {
	case isNoMatch(err):
		return fmt.Errorf("%s: the cluster has no wgpolicyk8s.io/v1alpha2 report CRDs: install manifests/crds (kubectl apply -f manifests/crds): %w", what, err)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("%s: not allowed: grant get, list, create, update and delete on policyreports and clusterpolicyreports of wgpolicyk8s.io (manifests/base/rbac.yaml): %w", what, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

func isNoMatch(err error) bool {
	return meta.IsNoMatchError(err) || (apierrors.IsNotFound(err) && strings.Contains(err.Error(), "the server could not find the requested resource"))
}
