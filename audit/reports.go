package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpenter-guard/karpenter-guard/cluster"
	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/internal/wording"
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

// Report names and labels.
const (
	ReportName        = "karpenter-guard"
	AWSAuthReportName = "karpenter-guard-aws-auth"
	ManagedByLabel    = "app.kubernetes.io/managed-by"
	ManagedBy         = "karpenter-guard"
	PartialAnnotation = "karpenter-guard.io/partial"
	// PassResultsAnnotation is set on every report of an outcome whose pass results were left out
	// (more than MaxPassResults), saying how many.
	PassResultsAnnotation = "karpenter-guard.io/pass-results"
	ModeAnnotation        = "karpenter-guard.io/mode"
	WouldDenyProperty     = "wouldBeDenied"
	resultSource          = "karpenter-guard"
)

// Report limits. etcd refuses a request of more than about 1.5 MiB, and a report it refuses is no
// report at all; results are cut into reports of at most maxResults results and maxReportBytes of
// JSON, and a result's message and property values are clipped to maxTextBytes (a skip reason is the
// user's text, of any length), so that no report comes near the limit however long the texts are.
const (
	maxResults     = 500
	maxReportBytes = 512 << 10
	maxTextBytes   = 1 << 10
)

// MaxPassResults bounds the pass results of one audit. A pass result is one rule that ran on one object
// and found nothing (about 300 bytes), so an outcome holds about forty per EC2NodeClass: within the bound,
// a cluster of some 250 objects, every pass is reported (at most 20 more reports); past it, none is, and
// every report says so (PassResultsAnnotation), so that a cluster of thousands of objects does not
// rewrite tens of megabytes of reports in etcd on every audit. Fail, warn, error and skip results are
// never left out.
const MaxPassResults = 10000

// Reports builds the reports of an outcome: ClusterPolicyReports for the cluster-scoped EC2NodeClasses
// and NodePools, PolicyReports in kube-system for aws-auth; each kind is one report, or several
// (karpenter-guard, karpenter-guard-2, …) past maxResults results or maxReportBytes. Findings are fail
// (deny) or warn; rules that could not be evaluated are error, with the reason, never pass; skips are
// skip; a rule that ran on an object and found nothing is pass, one result per rule and object as
// Kyverno writes them, so that Policy Reporter's compliance views count what passed (up to
// MaxPassResults). In mode dry-run a deny finding is marked as what enforcement would have denied.
// Messages and property values longer than maxTextBytes are clipped, saying so.
func Reports(o *Outcome, mode config.Mode, now time.Time) []*Report {
	ts := metav1.Timestamp{Seconds: now.Unix()}
	var cluster, awsAuth []Result
	add := func(ref objects.Ref, r Result) {
		r.Source, r.Timestamp = resultSource, ts
		r.Resources = []corev1.ObjectReference{objectReference(ref)}
		r.Category = ref.Kind
		r.Message = clip(r.Message)
		for k, v := range r.Properties {
			r.Properties[k] = clip(v)
		}
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
	annotations := map[string]string{PartialAnnotation: strconv.FormatBool(o.Partial), ModeAnnotation: string(mode)}
	if passes := max(o.PassedCount, len(o.Passed)); passes <= MaxPassResults {
		for _, p := range o.Passed {
			add(p.Object, Result{Policy: p.Rule, Rule: p.Rule, Result: "pass", Scored: true, Message: PassMessage})
		}
	} else {
		annotations[PassResultsAnnotation] = fmt.Sprintf("%d pass results left out (more than %d); every fail, warn, error and skip result is here", passes, MaxPassResults)
	}
	sortResults(cluster)
	sortResults(awsAuth)
	out := split(ClusterPolicyReportGVK, "", ReportName, cluster, annotations)
	return append(out, split(PolicyReportGVK, objects.AWSAuthNamespace, AWSAuthReportName, awsAuth, annotations)...)
}

// PassMessage is the message of a pass result.
const PassMessage = "no finding: the rule ran on the object and found nothing to report"

// clip shortens a text longer than maxTextBytes, saying that it was clipped and where to read it
// whole.
func clip(s string) string {
	if len(s) <= maxTextBytes {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD") // the length it says is the one JSON would carry
	return wording.Clip(s, maxTextBytes, fmt.Sprintf(" (clipped from %d bytes; `karpenter-guard audit` prints it whole)", len(s)))
}

// split cuts results, in order, into the reports of one kind: each holds at most maxResults results
// and, as the JSON sent to the API server, at most maxReportBytes (unless one result alone is
// larger, which clipping prevents). The first is named base, the next base-2, base-3, …: the same
// results give the same reports under the same names. There is always one report, maybe without
// results, so that an empty outcome replaces the last one.
func split(gvk schema.GroupVersionKind, namespace, base string, results []Result, annotations map[string]string) []*Report {
	var out []*Report
	start := 0
	size := envelopeSize(gvk, namespace, chunkName(base, 0), annotations)
	for i := range results {
		n := jsonSize(&results[i]) + len(",")
		if i > start && (i-start == maxResults || size+n > maxReportBytes) {
			out = append(out, newReport(gvk, namespace, chunkName(base, len(out)), results[start:i], annotations))
			start, size = i, envelopeSize(gvk, namespace, chunkName(base, len(out)), annotations)
		}
		size += n
	}
	return append(out, newReport(gvk, namespace, chunkName(base, len(out)), results[start:], annotations))
}

// chunkName names report number i (from 0) of a kind: base, base-2, base-3, ….
func chunkName(base string, i int) string {
	if i == 0 {
		return base
	}
	return base + "-" + strconv.Itoa(i+1)
}

// envelopeSize is an upper bound of the JSON size of a report without its results: the summary's
// counts at their widest, the resource version an update carries, and the results field's brackets.
func envelopeSize(gvk schema.GroupVersionKind, namespace, name string, annotations map[string]string) int {
	r := newReport(gvk, namespace, name, nil, annotations)
	r.Summary = Summary{Pass: maxResults, Fail: maxResults, Warn: maxResults, Error: maxResults, Skip: maxResults}
	r.ResourceVersion = strconv.FormatUint(math.MaxUint64, 10)
	return jsonSize(r) + len(`,"results":[]`)
}

// jsonSize is the size of v encoded as JSON, as the client encodes it.
func jsonSize(v any) int {
	b, _ := json.Marshal(v) // strings, integers and maps of strings always encode
	return len(b)
}

// newReport makes one report of results, with a copy of annotations.
func newReport(gvk schema.GroupVersionKind, namespace, name string, results []Result, annotations map[string]string) *Report {
	r := &Report{
		TypeMeta: metav1.TypeMeta{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace,
			Labels:      map[string]string{ManagedByLabel: ManagedBy},
			Annotations: maps.Clone(annotations)},
		Results: results,
	}
	for _, res := range results {
		switch res.Result {
		case "pass":
			r.Summary.Pass++
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
		ref.APIVersion = cluster.EC2NodeClassGVK.GroupVersion().String()
	case objects.KindNodePool:
		ref.APIVersion = cluster.NodePoolGVK.GroupVersion().String()
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

// ErrNotOurs is the error of a report that karpenter-guard would write, or replace, under a name
// held by an object without its label: someone else's, which it neither overwrites nor deletes.
var ErrNotOurs = errors.New("a report of that name exists without the label " + ManagedByLabel + "=" + ManagedBy +
	": it is not karpenter-guard's, so it is neither overwritten nor deleted; delete or rename it to let karpenter-guard write its report")

// WriteReports replaces karpenter-guard's reports in the cluster with reports, as a ReportWriter with
// the logger of ctx and no metrics does.
func WriteReports(ctx context.Context, c client.Client, reports []*Report) error {
	w := &ReportWriter{Client: c, Log: logr.FromContextOrDiscard(ctx)}
	return w.Write(ctx, reports)
}

// ReportWriter replaces karpenter-guard's reports in the cluster. Only reports carrying the label
// app.kubernetes.io/managed-by=karpenter-guard are replaced or deleted: other tools' reports (Kyverno
// writes ClusterPolicyReports too) are never touched, even under a name karpenter-guard would use.
type ReportWriter struct {
	Client client.Client
	// Metrics counts each report written or deleted, by outcome; nil: not counted.
	Metrics *Metrics
	// Log receives each report that could not be written or deleted.
	Log logr.Logger
}

// Write creates or updates each report whole, then deletes karpenter-guard's reports no longer
// needed (a report past the new last one of its kind), so that a fixed object's results disappear. One
// report that cannot be written does not keep the others from being written: every write is
// attempted, and the error joins each failure, naming the report. A cluster without the report CRDs,
// or RBAC that does not allow writing them, is an error that says so.
func (w *ReportWriter) Write(ctx context.Context, reports []*Report) error {
	var errs []error
	keep := map[string]bool{}
	for _, r := range reports {
		keep[reportKey(r.Kind, r.Namespace, r.Name)] = true
		if err := w.put(ctx, r); err != nil {
			errs = append(errs, w.failed(err, r.Kind, r.Namespace, r.Name))
			continue
		}
		w.count(nil)
	}
	errs = append(errs, w.deleteStale(ctx, ClusterPolicyReportGVK, "", keep)...)
	errs = append(errs, w.deleteStale(ctx, PolicyReportGVK, objects.AWSAuthNamespace, keep)...)
	return errors.Join(errs...)
}

// failed logs and counts a report that could not be written or deleted, and returns err.
func (w *ReportWriter) failed(err error, kind, namespace, name string) error {
	w.count(err)
	w.Log.Error(err, "policy report write failed", "kind", kind, "namespace", namespace, "name", name)
	return err
}

func (w *ReportWriter) count(err error) {
	if w.Metrics == nil {
		return
	}
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	w.Metrics.reportWrites.WithLabelValues(outcome).Inc()
}

// put creates or replaces one report, unless its name is held by an object that is not ours.
func (w *ReportWriter) put(ctx context.Context, r *Report) error {
	u, err := toUnstructured(r)
	if err != nil {
		return fmt.Errorf("write %s %q: %w", r.Kind, r.Name, err)
	}
	u.SetGroupVersionKind(r.GroupVersionKind())
	cur := &unstructured.Unstructured{}
	cur.SetGroupVersionKind(r.GroupVersionKind())
	err = w.Client.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: r.Name}, cur)
	switch {
	case apierrors.IsNotFound(err) && !isNoMatch(err):
		if err := w.Client.Create(ctx, u); err != nil {
			return reportError("create", r.Kind, r.Namespace, r.Name, err)
		}
		return nil
	case err != nil:
		return reportError("get", r.Kind, r.Namespace, r.Name, err)
	case !ours(cur):
		return reportError("write", r.Kind, r.Namespace, r.Name, ErrNotOurs)
	}
	// The resource version makes the update fail, rather than overwrite, if the object was replaced
	// since it was read.
	u.SetResourceVersion(cur.GetResourceVersion())
	if err := w.Client.Update(ctx, u); err != nil {
		return reportError("update", r.Kind, r.Namespace, r.Name, err)
	}
	return nil
}

// deleteStale deletes karpenter-guard's reports of one kind (in namespace, "" for cluster-scoped ones)
// that this run did not write: listed by karpenter-guard's label, so another tool's reports are never
// touched, and all of them, so a chunk left by an earlier failure goes on the next run.
func (w *ReportWriter) deleteStale(ctx context.Context, gvk schema.GroupVersionKind, namespace string, keep map[string]bool) []error {
	old := &unstructured.UnstructuredList{}
	old.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := w.Client.List(ctx, old, client.InNamespace(namespace), client.MatchingLabels{ManagedByLabel: ManagedBy}); err != nil {
		err = reportError("list", gvk.Kind+"s", namespace, "", err)
		w.Log.Error(err, "stale policy reports not deleted")
		return []error{err}
	}
	var errs []error
	for i := range old.Items {
		u := &old.Items[i]
		if keep[reportKey(gvk.Kind, namespace, u.GetName())] || !ours(u) {
			continue
		}
		if err := w.delete(ctx, u); err != nil {
			errs = append(errs, w.failed(err, gvk.Kind, namespace, u.GetName()))
		}
	}
	return errs
}

// delete deletes a report as it was read: the preconditions make the deletion fail, rather than
// delete another object, if it was replaced since.
func (w *ReportWriter) delete(ctx context.Context, u *unstructured.Unstructured) error {
	uid, rv := u.GetUID(), u.GetResourceVersion()
	pre := metav1.Preconditions{ResourceVersion: &rv}
	if uid != "" {
		pre.UID = &uid
	}
	err := w.Client.Delete(ctx, u, client.Preconditions(pre))
	if err != nil && !apierrors.IsNotFound(err) {
		return reportError("delete", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	w.count(nil)
	return nil
}

// ours reports whether a report carries karpenter-guard's label.
func ours(u *unstructured.Unstructured) bool {
	return u.GetLabels()[ManagedByLabel] == ManagedBy
}

func reportKey(kind, namespace, name string) string { return kind + "/" + namespace + "/" + name }

// reportError wraps err of verb on a report (name "" for a list), saying what to do when the CRDs or
// the permission are missing.
func reportError(verb, kind, namespace, name string, err error) error {
	what := verb + " " + kind
	switch {
	case name != "" && namespace != "":
		what += fmt.Sprintf(" %q", namespace+"/"+name)
	case name != "":
		what += fmt.Sprintf(" %q", name)
	}
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
