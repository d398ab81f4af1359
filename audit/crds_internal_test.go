package audit

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"
)

// TestClusterCRDsKeptWhileUnchanged: the in-cluster audit builds the Set of the cluster's CRDs once and
// keeps it (its compiled validators and remembered verdicts) until a CRD changes.
func TestClusterCRDsKeptWhileUnchanged(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	var objs []*apiextensionsv1.CustomResourceDefinition
	for _, f := range []string{"karpenter.sh_nodepools.yaml", "karpenter.k8s.aws_ec2nodeclasses.yaml"} {
		data, err := os.ReadFile(filepath.Join("..", "crds", "karpenter", f))
		if err != nil {
			t.Fatal(err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(data, crd); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, crd)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs[0], objs[1]).Build()
	ctx := context.Background()
	var cache clusterCRDs
	first, err := cache.get(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := cache.get(ctx, c); err != nil || again != first {
		t.Errorf("unchanged CRDs gave a new Set (%v)", err)
	}
	objs[0].Labels = map[string]string{"upgraded": "true"}
	if err := c.Update(ctx, objs[0]); err != nil {
		t.Fatal(err)
	}
	if after, err := cache.get(ctx, c); err != nil || after == first || len(after.Served("karpenter.sh", "NodePool")) != 1 {
		t.Errorf("a changed CRD kept the old Set (%v)", err)
	}
}
