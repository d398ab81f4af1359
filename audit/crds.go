package audit

import (
	"context"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpenter-guard/karpenter-guard/crds"
)

// KarpenterCRDNames are the CRDs whose schemas karpenter-crd-invalid checks stored objects against.
var KarpenterCRDNames = []string{"ec2nodeclasses.karpenter.k8s.aws", "nodepools.karpenter.sh"}

// ClusterCRDs reads the Karpenter CRDs the cluster serves, so the audit validates stored objects
// against the schemas their API server enforces, whatever Karpenter release is installed. It needs
// get on those two customresourcedefinitions (manifests/base/rbac.yaml grants it to the audit).
func ClusterCRDs(ctx context.Context, r client.Reader) (*crds.Set, error) {
	var found []*apiextensionsv1.CustomResourceDefinition
	for _, name := range KarpenterCRDNames {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
		if err := r.Get(ctx, client.ObjectKey{Name: name}, u); err != nil {
			return nil, fmt.Errorf("get CustomResourceDefinition %s: %w", name, err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, crd); err != nil {
			return nil, fmt.Errorf("read CustomResourceDefinition %s: %w", name, err)
		}
		found = append(found, crd)
	}
	s, err := crds.New(found...)
	if err != nil {
		return nil, err
	}
	s.Source = "the cluster's CRDs"
	return s, nil
}
