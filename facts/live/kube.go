package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// The Karpenter kinds as the API server serves them (domain.md §1).
var (
	EC2NodeClassGVK = schema.GroupVersionKind{Group: objects.GroupKarpenterAWS, Version: "v1", Kind: objects.KindEC2NodeClass}
	NodePoolGVK     = schema.GroupVersionKind{Group: objects.GroupKarpenter, Version: "v1", Kind: objects.KindNodePool}
)

// CacheOptions are the controller-runtime cache options of everything karpenter-guard reads from the
// cluster: the one kube-system/aws-auth ConfigMap (a field selector on its name, so no other ConfigMap
// is listed or watched, and RBAC can grant it by name), and every EC2NodeClass and NodePool.
func CacheOptions() ctrlcache.Options {
	return ctrlcache.Options{
		ByObject: map[client.Object]ctrlcache.ByObject{
			&corev1.ConfigMap{}: {
				Namespaces: map[string]ctrlcache.Config{objects.AWSAuthNamespace: {}},
				Field:      fields.OneTermEqualSelector("metadata.name", objects.AWSAuthName),
			},
		},
	}
}

// ClusterObjects keeps the cluster's EC2NodeClasses and NodePools as the rules read them, converted
// once per change from a watch (not once per admission review), in copy-on-write snapshots.
type ClusterObjects struct {
	mu          sync.RWMutex
	nodeClasses []*objects.Object
	nodePools   []*objects.Object
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
func (co *ClusterObjects) OnChange(f func()) {
	co.mu.Lock()
	defer co.mu.Unlock()
	co.onChange = append(co.onChange, f)
}

func (co *ClusterObjects) changed() {
	co.mu.RLock()
	fs := co.onChange
	co.mu.RUnlock()
	for _, f := range fs {
		f()
	}
}

// WatchClusterObjects registers watches of EC2NodeClasses and NodePools on c. The cache must be
// started (the manager does) for them to fill. direct (the manager's API reader) answers FetchNodeClass
// for what the watch has not delivered yet; nil means the watch only.
func WatchClusterObjects(ctx context.Context, c ctrlcache.Cache, direct client.Reader) (*ClusterObjects, error) {
	co := &ClusterObjects{byKey: map[string]*objects.Object{}, problems: map[string]string{}, direct: direct}
	for _, gvk := range []schema.GroupVersionKind{EC2NodeClassGVK, NodePoolGVK} {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		inf, err := c.GetInformer(ctx, u)
		if err != nil {
			return nil, fmt.Errorf("watch %s: %w (are Karpenter's v1 CRDs installed?)", gvk.Kind, err)
		}
		reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { co.put(gvk.Kind, obj); co.changed() },
			UpdateFunc: func(_, obj any) { co.put(gvk.Kind, obj); co.changed() },
			DeleteFunc: func(obj any) { co.remove(gvk.Kind, obj); co.changed() },
		})
		if err != nil {
			return nil, fmt.Errorf("watch %s: %w", gvk.Kind, err)
		}
		co.synced = append(co.synced, reg.HasSynced)
	}
	return co, nil
}

// put converts and stores one object.
func (co *ClusterObjects) put(kind string, obj any) {
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
	co.rebuild()
}

func (co *ClusterObjects) remove(kind string, obj any) {
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
	co.rebuild()
}

// rebuild makes new snapshots; readers keep the old ones. Callers hold co.mu.
func (co *ClusterObjects) rebuild() {
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
	co.nodeClasses, co.nodePools = ncs, nps
}

// NodeClasses returns the EC2NodeClasses (a snapshot; do not modify).
func (co *ClusterObjects) NodeClasses() []*objects.Object {
	co.mu.RLock()
	defer co.mu.RUnlock()
	return co.nodeClasses
}

// NodePools returns the NodePools (a snapshot; do not modify).
func (co *ClusterObjects) NodePools() []*objects.Object {
	co.mu.RLock()
	defer co.mu.RUnlock()
	return co.nodePools
}

// FetchNodeClass returns the EC2NodeClass of that name from the API server itself (nil when there is
// none): `kubectl apply` of a class and a NodePool together reviews the pool moments after the class
// is stored, before the watch may have delivered it.
func (co *ClusterObjects) FetchNodeClass(ctx context.Context, name string) (*objects.Object, error) {
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
func (co *ClusterObjects) Problems() map[string]string {
	co.mu.RLock()
	defer co.mu.RUnlock()
	out := make(map[string]string, len(co.problems))
	for k, v := range co.problems {
		out[k] = v
	}
	return out
}

// Synced returns nil once every watch has delivered the initial list.
func (co *ClusterObjects) Synced(context.Context) error {
	for _, s := range co.synced {
		if !s() {
			return facts.Unknown(facts.ClusterNodeClasses, "the watch of the cluster's EC2NodeClasses and NodePools has not synced yet")
		}
	}
	return nil
}

// ToObject converts a cluster object into the rules' view, named "cluster/Kind/name" where a
// manifest would have its file.
func ToObject(u *unstructured.Unstructured) (*objects.Object, error) {
	data, err := json.Marshal(u.Object)
	if err != nil {
		return nil, fmt.Errorf("encode %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	d, err := objects.FromJSON(data, "cluster/"+u.GetKind()+"/"+u.GetName())
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
