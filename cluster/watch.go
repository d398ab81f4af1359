// Package cluster is the Kubernetes watch the webhook and the audit share: the cluster's EC2NodeClasses
// and NodePools as the rules read them (trimmed to what they need, converted once per version), the
// cache options that also watch the one aws-auth ConfigMap, and a direct read for an object stored
// moments ago that the watch has not delivered yet. It knows nothing of AWS.
package cluster

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
)

// The Karpenter kinds as the API server serves them (docs/design.md §1).
var (
	EC2NodeClassGVK = schema.GroupVersionKind{Group: objects.GroupKarpenterAWS, Version: "v1", Kind: objects.KindEC2NodeClass}
	NodePoolGVK     = schema.GroupVersionKind{Group: objects.GroupKarpenter, Version: "v1", Kind: objects.KindNodePool}
)

// CacheOptions are the controller-runtime cache options of everything karpenter-guard reads from the
// cluster: the one kube-system/aws-auth ConfigMap (a field selector on its name, so no other ConfigMap
// is listed or watched, and RBAC can grant it by name), and every EC2NodeClass and NodePool, trimmed
// of what no rule reads (TrimForRules).
func CacheOptions() ctrlcache.Options {
	return ctrlcache.Options{
		DefaultTransform: TrimForRules,
		ByObject: map[client.Object]ctrlcache.ByObject{
			&corev1.ConfigMap{}: {
				Namespaces: map[string]ctrlcache.Config{objects.AWSAuthNamespace: {}},
				Field:      fields.OneTermEqualSelector("metadata.name", objects.AWSAuthName),
			},
		},
	}
}

// lastApplied is the annotation client-side `kubectl apply` keeps: a second copy of the object.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// TrimForRules is the watch cache's transform: it drops what no rule reads before an object is
// stored, since the cache holds every EC2NodeClass and NodePool for as long as the webhook runs.
// Managed fields and kubectl's last-applied annotation are each often as large as the spec, and an
// EC2NodeClass's status (the AMIs, subnets and security groups Karpenter resolved) larger still.
func TrimForRules(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return ctrlcache.TransformStripManagedFields()(obj)
	}
	u.SetManagedFields(nil)
	delete(u.Object, "status")
	if a := u.GetAnnotations(); a[lastApplied] != "" {
		delete(a, lastApplied)
		u.SetAnnotations(a)
	}
	return u, nil
}

// Objects keeps the cluster's EC2NodeClasses and NodePools as the rules read them, converted
// once per change from a watch (not once per admission review), in copy-on-write snapshots. The
// sorted snapshots are rebuilt when next read, not on every event: the initial list of a cluster with
// thousands of objects is thousands of events.
type Objects struct {
	mu          sync.RWMutex
	nodeClasses []*objects.Object
	nodePools   []*objects.Object
	dirty       bool                       // byKey changed since the snapshots were built
	byKey       map[string]*objects.Object // kind/name → object
	problems    map[string]string          // kind/name → why it could not be read

	synced []toolscache.InformerSynced
	// direct reads the API server without the cache, for objects the watch has not delivered yet.
	direct client.Reader
	// onChange are called after every change the watch delivers.
	onChange []func()
}

// OnChange registers f to be called (from the watch's goroutine; keep it quick) after every change.
// Register before the cache starts.
func (co *Objects) OnChange(f func()) {
	co.mu.Lock()
	defer co.mu.Unlock()
	co.onChange = append(co.onChange, f)
}

func (co *Objects) changed() {
	co.mu.RLock()
	fs := co.onChange
	co.mu.RUnlock()
	for _, f := range fs {
		f()
	}
}

// Watch registers watches of EC2NodeClasses and NodePools on c. The cache must be
// started (the manager does) for them to fill. direct (the manager's API reader) answers FetchNodeClass
// for what the watch has not delivered yet; nil means the watch only.
func Watch(ctx context.Context, c ctrlcache.Cache, direct client.Reader) (*Objects, error) {
	co := &Objects{byKey: map[string]*objects.Object{}, problems: map[string]string{}, direct: direct}
	for _, gvk := range []schema.GroupVersionKind{EC2NodeClassGVK, NodePoolGVK} {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		inf, err := c.GetInformer(ctx, u)
		if err != nil {
			return nil, fmt.Errorf("watch %s: %w (are Karpenter's v1 CRDs installed?)", gvk.Kind, err)
		}
		reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc: func(obj any) { co.put(gvk.Kind, obj); co.changed() },
			UpdateFunc: func(old, obj any) {
				if sameForRules(old, obj) {
					return
				}
				co.put(gvk.Kind, obj)
				co.changed()
			},
			DeleteFunc: func(obj any) { co.remove(gvk.Kind, obj); co.changed() },
		})
		if err != nil {
			return nil, fmt.Errorf("watch %s: %w", gvk.Kind, err)
		}
		co.synced = append(co.synced, reg.HasSynced)
	}
	return co, nil
}

// sameForRules reports whether an update changed nothing the rules read: Karpenter writes its
// objects' status (conditions, resolved AMIs and subnets) far more often than anyone edits them, and
// the status subresource leaves the generation alone; a resync redelivers an object unchanged.
func sameForRules(old, obj any) bool {
	o, ok1 := old.(*unstructured.Unstructured)
	n, ok2 := obj.(*unstructured.Unstructured)
	if !ok1 || !ok2 {
		return false
	}
	if o.GetResourceVersion() == n.GetResourceVersion() {
		return true
	}
	return o.GetGeneration() == n.GetGeneration() && n.GetGeneration() != 0 &&
		maps.Equal(o.GetLabels(), n.GetLabels()) && maps.Equal(o.GetAnnotations(), n.GetAnnotations())
}

// put converts and stores one object.
func (co *Objects) put(kind string, obj any) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	key := kind + "/" + u.GetName()
	o, err := ToObject(u)
	co.mu.Lock()
	defer co.mu.Unlock()
	if err != nil {
		co.problems[key] = err.Error()
		delete(co.byKey, key)
	} else {
		delete(co.problems, key)
		co.byKey[key] = o
	}
	co.dirty = true
}

func (co *Objects) remove(kind string, obj any) {
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	co.mu.Lock()
	defer co.mu.Unlock()
	delete(co.byKey, kind+"/"+u.GetName())
	delete(co.problems, kind+"/"+u.GetName())
	co.dirty = true
}

// snapshots returns the current snapshots, rebuilding them first when the watch changed something.
func (co *Objects) snapshots() (nodeClasses, nodePools []*objects.Object) {
	co.mu.RLock()
	if !co.dirty {
		defer co.mu.RUnlock()
		return co.nodeClasses, co.nodePools
	}
	co.mu.RUnlock()
	co.mu.Lock()
	defer co.mu.Unlock()
	if co.dirty {
		co.rebuild()
	}
	return co.nodeClasses, co.nodePools
}

// rebuild makes new snapshots; readers keep the old ones. Callers hold co.mu for writing.
func (co *Objects) rebuild() {
	var ncs, nps []*objects.Object
	for _, o := range co.byKey {
		if o.NodeClass != nil {
			ncs = append(ncs, o)
		} else if o.NodePool != nil {
			nps = append(nps, o)
		}
	}
	byName := func(s []*objects.Object) { sort.Slice(s, func(i, j int) bool { return s[i].Name < s[j].Name }) }
	byName(ncs)
	byName(nps)
	co.nodeClasses, co.nodePools, co.dirty = ncs, nps, false
}

// NodeClasses returns the EC2NodeClasses (a snapshot; do not modify).
func (co *Objects) NodeClasses() []*objects.Object {
	ncs, _ := co.snapshots()
	return ncs
}

// NodeClass returns the stored EC2NodeClass of that name, or nil: a review looks up one class, and
// scanning the snapshot for it would read every stored object.
func (co *Objects) NodeClass(name string) *objects.Object {
	co.mu.RLock()
	defer co.mu.RUnlock()
	return co.byKey[EC2NodeClassGVK.Kind+"/"+name]
}

// NodePools returns the NodePools (a snapshot; do not modify).
func (co *Objects) NodePools() []*objects.Object {
	_, nps := co.snapshots()
	return nps
}

// FetchNodeClass returns the EC2NodeClass of that name from the API server itself (nil when there is
// none): `kubectl apply` of a class and a NodePool together reviews the pool moments after the class
// is stored, before the watch may have delivered it.
func (co *Objects) FetchNodeClass(ctx context.Context, name string) (*objects.Object, error) {
	if co.direct == nil {
		return nil, nil
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(EC2NodeClassGVK)
	if err := co.direct.Get(ctx, client.ObjectKey{Name: name}, u); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("get EC2NodeClass %s: %w", name, err)
	}
	return ToObject(u)
}

// Problems returns, by "Kind/name", the objects that could not be read as the rules need them.
func (co *Objects) Problems() map[string]string {
	co.mu.RLock()
	defer co.mu.RUnlock()
	out := make(map[string]string, len(co.problems))
	for k, v := range co.problems {
		out[k] = v
	}
	return out
}

// Synced returns nil once every watch has delivered the initial list.
func (co *Objects) Synced(context.Context) error {
	for _, s := range co.synced {
		if !s() {
			return facts.Unknown(facts.ClusterNodeClasses, "the watch of the cluster's EC2NodeClasses and NodePools has not synced yet")
		}
	}
	return nil
}

// ToObject converts a cluster object into the rules' view, named "cluster/Kind/name" where a
// manifest would have its file. The Object reads its fields from u's content, which the cache shares:
// neither may be modified after.
func ToObject(u *unstructured.Unstructured) (*objects.Object, error) {
	d, err := objects.FromUnstructured(u.Object, "cluster/"+u.GetKind()+"/"+u.GetName())
	if err != nil {
		var de *objects.DecodeError
		if errors.As(err, &de) {
			return nil, errors.New(de.Message)
		}
		return nil, err
	}
	if d.Object == nil {
		return nil, fmt.Errorf("%s %s is not a Karpenter object karpenter-guard reads", u.GetKind(), u.GetName())
	}
	return d.Object, nil
}
