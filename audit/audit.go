// Package audit evaluates what is already stored in a cluster: every EC2NodeClass, NodePool and the
// kube-system/aws-auth ConfigMap, with the same catalog and messages as `check`. The CLI runs it once
// (`karpenter-guard audit`); serve runs it in the cluster, periodically and when the objects change
// (loop.go), and both can publish the outcome as wgpolicyk8s.io/v1alpha2 policy reports (reports.go).
package audit

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpenter-guard/karpenter-guard/cluster"
	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/crds"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/manifest"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

// Outcome is one audit.
type Outcome struct {
	validators.Result
	// Problems are objects that could not be read as the rules need them (each names the object).
	Problems []manifest.Error
	// Partial is set when some rules could not be evaluated for want of facts (AWS unavailable, a
	// permission missing) or some objects could not be read: the outcome holds what could be judged,
	// and says so.
	Partial bool
}

// Objects are the cluster objects an audit evaluates.
type Objects struct {
	NodeClasses, NodePools []*objects.Object
	// AWSAuth is kube-system/aws-auth, nil when there is none.
	AWSAuth  *objects.Object
	Problems []manifest.Error
	// CRDs are the Karpenter CRDs the stored objects are validated against (karpenter-crd-invalid);
	// nil for the built-in ones.
	CRDs *crds.Set
}

// All returns every object, classes first.
func (o *Objects) All() []*objects.Object {
	out := append(append([]*objects.Object{}, o.NodeClasses...), o.NodePools...)
	if o.AWSAuth != nil {
		out = append(out, o.AWSAuth)
	}
	return out
}

// pageSize bounds each list request: a cluster of ten thousand NodePools is read in pages.
const pageSize = 500

// List reads the EC2NodeClasses, NodePools and aws-auth through r (paged). A cluster without the
// Karpenter CRDs is an error that says so; an object the rules cannot read is a problem, not a failure.
func List(ctx context.Context, r client.Reader) (*Objects, error) {
	out := &Objects{}
	for _, gvk := range []schema.GroupVersionKind{cluster.EC2NodeClassGVK, cluster.NodePoolGVK} {
		cont := ""
		for {
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
			if err := r.List(ctx, list, client.Limit(pageSize), client.Continue(cont)); err != nil {
				if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
					return nil, fmt.Errorf("the cluster serves no %s %s: are Karpenter's v1 CRDs installed?", gvk.GroupVersion(), gvk.Kind)
				}
				if apierrors.IsForbidden(err) {
					return nil, fmt.Errorf("not allowed to list %s: grant get, list and watch on %s (manifests/base/rbac.yaml): %w", gvk.Kind, gvk.GroupVersion(), err)
				}
				return nil, fmt.Errorf("list %s: %w", gvk.Kind, err)
			}
			for i := range list.Items {
				u := &list.Items[i]
				_, _ = cluster.TrimForRules(u) // as the watch stores them: less to convert
				o, err := cluster.ToObject(u)
				if err != nil {
					out.Problems = append(out.Problems, manifest.Error{File: "cluster/" + gvk.Kind + "/" + u.GetName(), Line: 1, Message: err.Error()})
					continue
				}
				if o.NodeClass != nil {
					out.NodeClasses = append(out.NodeClasses, o)
				} else {
					out.NodePools = append(out.NodePools, o)
				}
			}
			if cont = list.GetContinue(); cont == "" {
				break
			}
		}
	}
	out.AWSAuth, out.Problems = readAWSAuth(ctx, r, out.Problems)
	return out, nil
}

// readAWSAuth reads kube-system/aws-auth into the rules' view: nil when there is none, and a problem
// added when it cannot be read or converted. Without it the rest still gets audited; the rules that
// need it say why they could not.
func readAWSAuth(ctx context.Context, r client.Reader, problems []manifest.Error) (*objects.Object, []manifest.Error) {
	const file = "cluster/ConfigMap/" + objects.AWSAuthNamespace + "/" + objects.AWSAuthName
	var cm corev1.ConfigMap
	err := r.Get(ctx, client.ObjectKey{Namespace: objects.AWSAuthNamespace, Name: objects.AWSAuthName}, &cm)
	switch {
	case apierrors.IsNotFound(err):
		return nil, problems
	case err != nil:
		return nil, append(problems, manifest.Error{File: file, Line: 1, Message: "cannot read kube-system/aws-auth: " + err.Error()})
	}
	o, err := configMapObject(&cm)
	if err != nil {
		return nil, append(problems, manifest.Error{File: file, Line: 1, Message: err.Error()})
	}
	return o, problems
}

// configMapObject converts the aws-auth ConfigMap into the rules' view.
func configMapObject(cm *corev1.ConfigMap) (*objects.Object, error) {
	u, err := toUnstructured(cm)
	if err != nil {
		return nil, err
	}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	return cluster.ToObject(u)
}

// Run evaluates objs with the catalog (scope audit: the rules that judge stored objects), with p for
// facts. The cluster's EC2NodeClasses are the other objects the rules see, and the aws-auth read with
// them is the one the rules are answered with.
func Run(ctx context.Context, cat *validators.Catalog, cfg *config.Config, p facts.Provider, objs *Objects) *Outcome {
	return RunWithProgress(ctx, cat, cfg, p, objs, nil)
}

// RunWithProgress is Run, calling progress(done, total) after each object (nil: no report).
func RunWithProgress(ctx context.Context, cat *validators.Catalog, cfg *config.Config, p facts.Provider, objs *Objects, progress func(done, total int)) *Outcome {
	all := objs.All()
	if objs.AWSAuth != nil {
		data, _ := validators.ConfigMapData(objs.AWSAuth) // parsed once, by WithClusterAWSAuth
		p = facts.WithClusterAWSAuth(p, data)
	}
	complete := func(context.Context) error { return nil } // the objects were listed whole
	res := cat.Evaluate(&validators.Context{Context: ctx, Config: cfg, Facts: facts.WithClusterNodeClasses(p, complete),
		Input: all, Scope: validators.ScopeAudit, Progress: progress, CRDs: objs.CRDs, MaxPassed: MaxPassResults}, all)
	return &Outcome{Result: res, Problems: objs.Problems, Partial: len(res.NotEvaluated) > 0 || len(objs.Problems) > 0}
}

// toUnstructured converts a typed object.
func toUnstructured(obj any) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("convert: %w", err)
	}
	return &unstructured.Unstructured{Object: m}, nil
}
