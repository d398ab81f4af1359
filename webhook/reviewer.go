// Package webhook answers Kubernetes admission reviews of Karpenter's EC2NodeClasses and NodePools and of
// the kube-system/aws-auth ConfigMap with the rule catalog: /validate refuses or warns as the mode and
// the per-rule actions say, /mutate applies the safe fixes as JSON patches. It runs on
// controller-runtime's webhook server (server.go) and never calls AWS itself: facts come from the
// provider it is given (live or a snapshot), within the aws.timeout budget of each request.
package webhook

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/internal/wording"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

// Cluster is what the webhook knows of the Karpenter objects stored in the cluster.
type Cluster interface {
	// NodeClasses returns the cluster's EC2NodeClasses (do not modify them).
	NodeClasses() []*objects.Object
	// NodeClass returns the cluster's EC2NodeClass of that name, or nil.
	NodeClass(name string) *objects.Object
	// NodePools returns the cluster's NodePools (do not modify them).
	NodePools() []*objects.Object
	// Synced returns nil once the objects are complete (the watch caches have synced), else why not.
	Synced(ctx context.Context) error
	// FetchNodeClass asks the API server for one EC2NodeClass (nil when there is none), for a class
	// stored moments ago that the watch has not delivered yet.
	FetchNodeClass(ctx context.Context, name string) (*objects.Object, error)
}

// Reviewer evaluates admission requests. Its fields are set once; it is safe for concurrent use.
type Reviewer struct {
	Catalog *validators.Catalog
	Config  *config.Config
	// Cluster gives the cluster's EC2NodeClasses; nil means they are unknown.
	Cluster Cluster
	Metrics *Metrics
	Log     logr.Logger

	fixes *validators.Catalog
	// facts is the provider the reviewer was given, answering cluster.ec2NodeClasses from Cluster.
	facts facts.Provider
}

// NewReviewer returns a reviewer; cluster may be nil.
func NewReviewer(cat *validators.Catalog, cfg *config.Config, p facts.Provider, cluster Cluster, m *Metrics, log logr.Logger) *Reviewer {
	var fixable []*validators.Rule
	for _, r := range cat.Rules() {
		if r.Fixable && r.Scope != validators.ScopeCLI {
			fixable = append(fixable, r)
		}
	}
	if m == nil {
		m, _ = NewMetrics(nil)
	}
	known := func(context.Context) error {
		return facts.Unknown(facts.ClusterNodeClasses, "karpenter-guard has no access to the cluster's EC2NodeClasses")
	}
	if cluster != nil {
		known = cluster.Synced
	}
	return &Reviewer{Catalog: cat, Config: cfg, Cluster: cluster, Metrics: m, Log: log, fixes: cat.Subset(fixable...),
		facts: facts.WithClusterNodeClasses(p, known)}
}

// review is one decoded admission request.
type review struct {
	req  admission.Request
	kind string // validators.KindEC2NodeClass, KindNodePool or KindAWSAuth
	// obj is the object as it would be stored (for DELETE, the object being deleted); old is the
	// stored object before the request (UPDATE and DELETE). Either is nil when it cannot be read.
	obj, old *objects.Object
	// objValues and oldValues are the same objects as plain values, without the typed views: what is
	// compared to tell what an UPDATE changes, even when a view cannot be read (a field of a type
	// this version of karpenter-guard does not know). Nil when not even that could be read.
	objValues, oldValues objects.Map
	// objErr says why obj could not be read (for DELETE, the object being deleted). Why old could
	// not be read is not kept: the stored object is never a reason to refuse.
	objErr error
}

// ref names the object of the review for messages: Kind "name".
func (rv *review) ref() string {
	if rv.obj != nil {
		return rv.obj.Ref().String()
	}
	return objects.Ref{Kind: rv.req.Kind.Kind, Name: rv.req.Name, Namespace: rv.req.Namespace}.String()
}

// changesSpec reports whether the request makes or changes a spec: a CREATE, or an UPDATE whose spec
// differs from the stored one. Only such requests may be refused for something karpenter-guard cannot
// decide (an object it cannot read, a fact AWS did not give in time): metadata, finalizer and
// annotation churn, which Karpenter's own controller makes, never is. An UPDATE whose stored object
// cannot be read at all counts as not changing the spec: the stored object is never a reason to refuse.
func (rv *review) changesSpec() bool {
	switch rv.req.Operation {
	case admissionv1.Create:
		return true
	case admissionv1.Update:
		if rv.kind == validators.KindAWSAuth || rv.objValues == nil || rv.oldValues == nil {
			return false
		}
		return !rv.unchanged([]any{"spec"})
	}
	return false
}

// beingDeleted reports whether the object of a CREATE or UPDATE carries a deletionTimestamp: the
// finalizer and annotation updates that let a deletion finish are never reviewed.
func (rv *review) beingDeleted() bool {
	return rv.req.Operation != admissionv1.Delete && rv.objValues.Has("metadata", "deletionTimestamp")
}

// decode reads a request. A request the webhook does not review is answered allowed; one that is not
// an admission request at all (no object) is answered with what is wrong. An object or oldObject whose
// fields cannot be read is not an error here: the review records why, and the caller decides.
func decode(req admission.Request) (*review, *admission.Response) {
	rv := &review{req: req}
	gvk := req.Kind
	switch {
	case gvk.Group == objects.GroupKarpenterAWS && gvk.Version == "v1" && gvk.Kind == objects.KindEC2NodeClass:
		rv.kind = validators.KindEC2NodeClass
	case gvk.Group == objects.GroupKarpenter && gvk.Version == "v1" && gvk.Kind == objects.KindNodePool:
		rv.kind = validators.KindNodePool
	case gvk.Group == "" && gvk.Version == "v1" && gvk.Kind == objects.KindConfigMap &&
		req.Namespace == objects.AWSAuthNamespace && req.Name == objects.AWSAuthName:
		rv.kind = validators.KindAWSAuth
	default:
		resp := admission.Allowed(fmt.Sprintf("karpenter-guard does not review %s", objects.Ref{APIVersion: strings.TrimPrefix(gvk.Group+"/"+gvk.Version, "/"), Kind: gvk.Kind, Name: req.Name, Namespace: req.Namespace}))
		return nil, &resp
	}
	if req.SubResource != "" {
		resp := admission.Allowed("karpenter-guard does not review subresource " + req.SubResource)
		return nil, &resp
	}
	switch req.Operation {
	case admissionv1.Create, admissionv1.Update:
		if len(req.Object.Raw) == 0 {
			return nil, errored(http.StatusBadRequest, rv, errors.New("the AdmissionReview has no request.object"))
		}
		rv.obj, rv.objValues, rv.objErr = readObject(req.Object.Raw, "object")
		if req.Operation == admissionv1.Update {
			rv.old, rv.oldValues, _ = readObject(req.OldObject.Raw, "stored object")
		}
	case admissionv1.Delete:
		rv.old, rv.oldValues, rv.objErr = readObject(req.OldObject.Raw, "stored object")
		rv.obj, rv.objValues = rv.old, rv.oldValues
	default:
		resp := admission.Allowed("karpenter-guard does not review " + string(req.Operation))
		return nil, &resp
	}
	return rv, nil
}

// readObject decodes one object of a review (JSON, as the API server sends it): the object with its
// typed view, and its plain values, which are there even when the view cannot be read. what names it
// in errors ("object", "stored object").
func readObject(raw []byte, what string) (*objects.Object, objects.Map, error) {
	if len(raw) == 0 {
		return nil, nil, fmt.Errorf("the AdmissionReview carries no %s", what)
	}
	d, err := objects.FromJSON(raw, "")
	if err == nil && d.Object != nil {
		values, _ := d.Object.Fields.(objects.Map)
		return d.Object, values, nil
	}
	if err == nil {
		err = fmt.Errorf("cannot read the %s: it is not an EC2NodeClass, NodePool or the aws-auth ConfigMap", what)
	} else if de := (*objects.DecodeError)(nil); errors.As(err, &de) {
		// The webhook's own message names the object: the decoder's Kind "name" prefix goes.
		err = fmt.Errorf("cannot read the %s: %s", what, decodedObjectPrefix.ReplaceAllString(de.Message, ""))
	} else {
		err = fmt.Errorf("cannot read the %s: %w", what, err)
	}
	// The plain values, for what the request changes. Only objects without a view take this path.
	var values map[string]any
	if utiljson.Unmarshal(raw, &values) != nil || values == nil {
		return nil, nil, err
	}
	return nil, values, err
}

// decodedObjectPrefix is how the decoder's messages start: Kind "name": .
var decodedObjectPrefix = regexp.MustCompile(`^[A-Za-z0-9]+ "(?:[^"\\]|\\.)*": `)

func errored(code int32, rv *review, err error) *admission.Response {
	resp := admission.Errored(code, fmt.Errorf("karpenter-guard: %s %s: %w", rv.req.Kind.Kind, rv.req.Name, err))
	return &resp
}

// unread answers a review whose object cannot be read (a field of a type this version of
// karpenter-guard does not know, say after a Karpenter upgrade). It is refused only in mode enforce,
// and only when the request makes or changes a spec; anything else is allowed with a warning that
// names the field, so that no Karpenter release can block the writes a cluster lives on.
func (r *Reviewer) unread(rv *review) admission.Response {
	what := wording.OneLine(rv.objErr.Error())
	refuse := rv.changesSpec()
	if r.Config.Mode == config.ModeEnforce && refuse {
		return admission.Denied(fmt.Sprintf("karpenter-guard: %s denied: %s\n"+
			"  fix: correct the field; if the Karpenter CRDs accept it, this karpenter-guard is older than them: upgrade it (or switch to mode warn, components/mode-warn, until then)", rv.ref(), what))
	}
	resp := admission.Allowed("")
	if r.Config.Mode != config.ModeDryRun {
		resp.Warnings = []string{clip("[karpenter-guard] not checked: "+what, maxWarning)}
	}
	if refuse && r.Config.Mode == config.ModeDryRun {
		what = "would deny: " + what
	}
	resp.AuditAnnotations = map[string]string{"unread": annotation(what)}
	return resp
}

// evaluate runs cat on the review's object within the aws.timeout budget. The rules find the
// cluster's EC2NodeClasses through the cache's index, with the object under review in place of its
// stored version; aws-auth reviews, which check every class, get them all as input.
func (r *Reviewer) evaluate(ctx context.Context, cat *validators.Catalog, rv *review) validators.Result {
	// The request's values but not its cancellation: a server shutting down cancels the contexts of
	// requests in flight, which must still be answered in full, within aws.timeout.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.Config.AWS.Timeout.Duration)
	defer cancel()
	c := &validators.Context{
		Context: ctx, Config: r.Config, Facts: r.facts, Scope: validators.ScopeAdmission,
		Operation: string(rv.req.Operation), Old: rv.old,
	}
	find := func(string) *objects.Object { return nil }
	if r.Cluster != nil {
		find = r.Cluster.NodeClass
	}
	switch rv.kind {
	case validators.KindEC2NodeClass:
		self, deleted, stored := rv.obj, rv.req.Operation == admissionv1.Delete, find
		if r.Cluster != nil {
			c.FindNodePools = func(string) []*objects.Object { return r.Cluster.NodePools() }
		}
		find = func(name string) *objects.Object {
			switch {
			case name != self.Name:
				return stored(name)
			case deleted:
				return nil
			}
			return self
		}
	case validators.KindNodePool:
		if fetched := r.missingNodeClass(ctx, rv.obj, find); fetched != nil {
			stored := find
			find = func(name string) *objects.Object {
				if name == fetched.Name {
					return fetched
				}
				return stored(name)
			}
		}
	case validators.KindAWSAuth:
		if r.Cluster != nil {
			c.Input = r.Cluster.NodeClasses()
		}
	}
	c.FindNodeClass = find
	return cat.Evaluate(c, []*objects.Object{rv.obj})
}

// missingNodeClass fetches the EC2NodeClass a NodePool refers to when the watch does not have it:
// applying a class and its pool together must not warn that the class is missing.
func (r *Reviewer) missingNodeClass(ctx context.Context, pool *objects.Object, find func(string) *objects.Object) *objects.Object {
	ref := pool.NodePool.Spec.Template.Spec.NodeClassRef
	if r.Cluster == nil || ref == nil || ref.Name == "" || find(ref.Name) != nil {
		return nil
	}
	o, err := r.Cluster.FetchNodeClass(ctx, ref.Name)
	if err != nil {
		r.Log.Info("could not look up the NodePool's EC2NodeClass", "nodeClass", ref.Name, "error", err.Error())
	}
	return o
}

// Validate answers /validate: the whole catalog, decided by the mode and the per-rule actions.
func (r *Reviewer) Validate(ctx context.Context, req admission.Request) admission.Response {
	start := time.Now()
	rv, early := decode(req)
	if early == nil {
		early = r.unreviewable(rv)
	}
	if early != nil {
		r.Metrics.observe(req, early, time.Since(start))
		return *early
	}
	res := r.evaluate(ctx, r.Catalog, rv)
	v := decide(r.Config, rv, res)
	resp := v.response(rv)
	r.Metrics.observe(req, &resp, time.Since(start))
	r.Metrics.findings(v)
	if !resp.Allowed {
		first, _, _ := strings.Cut(resp.Result.Message, "\n")
		r.Log.V(1).Info("denied", "object", rv.ref(), "operation", req.Operation, "dryRun", req.DryRun != nil && *req.DryRun, "reason", first)
	}
	return resp
}

// unreviewable answers, without evaluating, a review of an object being deleted (allowed: the updates
// that let a deletion finish are never refused) or of an object that cannot be read (unread); nil for
// a review to evaluate.
func (r *Reviewer) unreviewable(rv *review) *admission.Response {
	var resp admission.Response
	switch {
	case rv.beingDeleted():
		resp = admission.Allowed("karpenter-guard does not review an object being deleted")
	case rv.objErr != nil: // a DELETE changes no spec: never refused
		resp = r.unread(rv)
	default:
		return nil
	}
	return &resp
}

// Mutate answers /mutate: the safe fixes, as JSON patches. On UPDATE only fields the request itself
// changes are touched: rewriting an untouched spec field of a stored EC2NodeClass would make
// Karpenter see drift and replace every node of the class. Nothing is patched in mode dry-run.
func (r *Reviewer) Mutate(ctx context.Context, req admission.Request) admission.Response {
	start := time.Now()
	rv, early := decode(req)
	if early != nil || rv.kind == validators.KindAWSAuth || req.Operation == admissionv1.Delete || rv.objErr != nil || rv.beingDeleted() {
		// Nothing to fix: not reviewed, not a Karpenter object, being deleted, or not readable (which
		// /validate, not /mutate, reports).
		resp := admission.Allowed("")
		if early != nil {
			resp = *early
		}
		r.Metrics.observe(req, &resp, time.Since(start))
		return resp
	}
	res := r.evaluate(ctx, r.fixes, rv)
	applied, skipped := fixesFor(rv, res.Findings)
	resp := admission.Allowed("")
	annotations := map[string]string{}
	if r.Config.Mode == config.ModeDryRun {
		for _, f := range applied {
			annotations[annotationKey("would-fix", f.Rule)] = annotation(f.Fix)
		}
	} else {
		resp = admission.Patched("", patchesFor(rv, applied)...)
		for _, f := range applied {
			resp.Warnings = append(resp.Warnings, warning(f.Rule, "fixed: "+wording.OneLine(f.Fix)))
			annotations[annotationKey("fixed", f.Rule)] = annotation(f.Fix)
		}
	}
	for _, f := range skipped {
		annotations[annotationKey("not-fixed", f.Rule)] = "unchanged by this request, so not rewritten (Karpenter would replace the nodes)"
	}
	if len(annotations) > 0 {
		resp.AuditAnnotations = annotations
	}
	r.Metrics.observe(req, &resp, time.Since(start))
	return resp
}
