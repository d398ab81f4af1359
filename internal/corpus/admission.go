package corpus

import (
	"context"
	"encoding/json"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/karpenter-guard/karpenter-guard/manifest"
	"github.com/karpenter-guard/karpenter-guard/objects"
)

// AdmissionRequests returns CREATE requests for n corpus objects as the API server sends them (the
// object as JSON): even i an EC2NodeClass, odd i a NodePool. The load generator and the webhook's
// benchmark review the same requests.
func AdmissionRequests(n int) ([]admissionv1.AdmissionRequest, error) {
	var out []admissionv1.AdmissionRequest
	for i := 0; i < n; i++ {
		doc, kind, group, res := NodeClass(i), "EC2NodeClass", "karpenter.k8s.aws", "ec2nodeclasses"
		if i%2 == 1 {
			doc, kind, group, res = NodePool(i), "NodePool", "karpenter.sh", "nodepools"
		}
		obj, err := sigsyaml.YAMLToJSON([]byte(doc))
		if err != nil {
			return nil, fmt.Errorf("corpus object %d: %w", i, err)
		}
		var meta struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		}
		if err := json.Unmarshal(obj, &meta); err != nil {
			return nil, fmt.Errorf("corpus object %d: %w", i, err)
		}
		out = append(out, admissionv1.AdmissionRequest{
			UID: types.UID(fmt.Sprintf("load-%d", i)), Kind: metav1.GroupVersionKind{Group: group, Version: "v1", Kind: kind},
			Resource: metav1.GroupVersionResource{Group: group, Version: "v1", Resource: res}, Name: meta.Metadata.Name,
			Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: obj},
		})
	}
	return out, nil
}

// Cluster is what a running webhook's watch cache holds: every corpus EC2NodeClass (class-0 …
// class-(n-1)), synced. It satisfies webhook.Cluster, so that benchmarks review NodePools against
// the classes they name, as serve does, rather than warning that the classes are unknown.
type Cluster struct {
	classes []*objects.Object
	byName  map[string]*objects.Object
}

// NewCluster returns a synced cluster holding the first n corpus EC2NodeClasses.
func NewCluster(n int) (*Cluster, error) {
	set := &manifest.Set{}
	for i := 0; i < n; i++ {
		set.Add(manifest.Source{Path: fmt.Sprintf("class-%d.yaml", i), Data: []byte(NodeClass(i))})
	}
	if len(set.Errors) > 0 {
		return nil, fmt.Errorf("corpus classes: %v", set.Errors[0])
	}
	c := &Cluster{classes: set.Objects, byName: map[string]*objects.Object{}}
	for _, o := range set.Objects {
		c.byName[o.Name] = o
	}
	return c, nil
}

// NodeClasses returns the cluster's EC2NodeClasses.
func (c *Cluster) NodeClasses() []*objects.Object { return c.classes }

// NodePools returns no NodePools: the corpus cluster holds classes only.
func (c *Cluster) NodePools() []*objects.Object { return nil }

// NodeClass returns the class of that name, or nil.
func (c *Cluster) NodeClass(name string) *objects.Object { return c.byName[name] }

// Synced reports the cache as synced.
func (c *Cluster) Synced(context.Context) error { return nil }

// FetchNodeClass returns the class of that name, or nil.
func (c *Cluster) FetchNodeClass(_ context.Context, name string) (*objects.Object, error) {
	return c.NodeClass(name), nil
}
