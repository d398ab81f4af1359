package audit

import (
	"context"
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpenter-guard/karpenter-guard/crds"
)

// karpenterCRDNames names the CRDs whose schemas karpenter-crd-invalid checks stored objects against.
func karpenterCRDNames() []string {
	return []string{"ec2nodeclasses.karpenter.k8s.aws", "nodepools.karpenter.sh"}
}

// ClusterCRDs reads the Karpenter CRDs the cluster serves, so the audit validates stored objects
// against the schemas their API server enforces, whatever Karpenter release is installed. It needs
// get on those two customresourcedefinitions (manifests/base/rbac.yaml grants it to the audit).
func ClusterCRDs(ctx context.Context, r client.Reader) (*crds.Set, error) {
	return (&clusterCRDs{}).get(ctx, r)
}

// clusterCRDs keeps the Set built from the cluster's Karpenter CRDs while they stay the same (their
// resourceVersions), so the in-cluster audit builds the schema and CEL validators once and keeps the
// verdicts they remember across audits, instead of validating every stored object again each time.
type clusterCRDs struct {
	versions string
	set      *crds.Set
}

// get returns the Set of the cluster's Karpenter CRDs, reusing the last one when none has changed.
func (c *clusterCRDs) get(ctx context.Context, r client.Reader) (*crds.Set, error) {
	var (
		found    []*apiextensionsv1.CustomResourceDefinition
		versions []string
	)
	for _, name := range karpenterCRDNames() {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
		if err := r.Get(ctx, client.ObjectKey{Name: name}, u); err != nil {
			return nil, fmt.Errorf("get CustomResourceDefinition %s: %w", name, err)
		}
		versions = append(versions, name+"@"+u.GetResourceVersion())
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, crd); err != nil {
			return nil, fmt.Errorf("read CustomResourceDefinition %s: %w", name, err)
		}
		found = append(found, crd)
	}
	key := strings.Join(versions, ",")
	if c.set != nil && key == c.versions {
		return c.set, nil
	}
	s, err := crds.New(found...)
	if err != nil {
		return nil, err
	}
	s.Source = "the cluster's CRDs"
	c.set, c.versions = s, key
	return s, nil
}
