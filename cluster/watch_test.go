package cluster_test

import (
	"context"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/cache/informertest"

	"github.com/karpenter-guard/karpenter-guard/cluster"
)

// nodeClass is an EC2NodeClass as the API server serves it.
func nodeClass(name, resourceVersion string, generation int64, role string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{
			"role":                       role,
			"amiSelectorTerms":           []any{map[string]any{"alias": "al2023@latest"}},
			"subnetSelectorTerms":        []any{map[string]any{"tags": map[string]any{"karpenter.sh/discovery": "prod"}}},
			"securityGroupSelectorTerms": []any{map[string]any{"tags": map[string]any{"karpenter.sh/discovery": "prod"}}},
		},
	}}
	u.SetGroupVersionKind(cluster.EC2NodeClassGVK)
	u.SetName(name)
	u.SetResourceVersion(resourceVersion)
	u.SetGeneration(generation)
	return u
}

// TestClusterObjectsFollowTheWatch: the rules' view follows adds, spec edits and deletes; a status
// write (Karpenter's frequent one: same generation, labels and annotations) and a resync neither
// convert the object again nor wake the audit.
func TestClusterObjectsFollowTheWatch(t *testing.T) {
	ctx := context.Background()
	infs := &informertest.FakeInformers{}
	co, err := cluster.Watch(ctx, infs, nil)
	if err != nil {
		t.Fatal(err)
	}
	var changes atomic.Int32
	co.OnChange(func() { changes.Add(1) })
	kind := &unstructured.Unstructured{}
	kind.SetGroupVersionKind(cluster.EC2NodeClassGVK)
	inf, err := infs.FakeInformerFor(ctx, kind)
	if err != nil {
		t.Fatal(err)
	}
	role := func() string {
		ncs := co.NodeClasses()
		if len(ncs) != 1 {
			t.Fatalf("%d EC2NodeClasses; want 1", len(ncs))
		}
		return ncs[0].NodeClass.Spec.Role
	}

	v1 := nodeClass("default", "1", 1, "NodeRoleA")
	inf.Add(v1)
	if got := role(); got != "NodeRoleA" || changes.Load() != 1 {
		t.Fatalf("after add: role %q, %d changes", got, changes.Load())
	}

	status := nodeClass("default", "2", 1, "NodeRoleA")
	status.Object["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}
	inf.Update(v1, status)
	inf.Update(status, status) // a resync
	if changes.Load() != 1 {
		t.Errorf("a status write and a resync made %d changes; want none", changes.Load()-1)
	}

	edited := nodeClass("default", "3", 2, "NodeRoleB")
	inf.Update(status, edited)
	if got := role(); got != "NodeRoleB" || changes.Load() != 2 {
		t.Errorf("after a spec edit: role %q, %d changes; want NodeRoleB, 2", got, changes.Load())
	}
	if o := co.NodeClass("default"); o == nil || o.NodeClass.Spec.Role != "NodeRoleB" || co.NodeClass("other") != nil {
		t.Errorf("NodeClass by name: %+v, and %+v for a class that does not exist", o, co.NodeClass("other"))
	}

	labelled := nodeClass("default", "4", 2, "NodeRoleB")
	labelled.SetLabels(map[string]string{"team": "payments"})
	inf.Update(edited, labelled)
	if changes.Load() != 3 {
		t.Errorf("a label edit made %d changes; want 1", changes.Load()-2)
	}

	inf.Delete(labelled)
	if n := len(co.NodeClasses()); n != 0 || changes.Load() != 4 || co.NodeClass("default") != nil {
		t.Errorf("after delete: %d EC2NodeClasses, %d changes, NodeClass %+v", n, changes.Load(), co.NodeClass("default"))
	}
}

// TestTrimForRules: the watch cache keeps the spec, labels and other annotations, and drops what no
// rule reads: managed fields, kubectl's last-applied copy, the status.
func TestTrimForRules(t *testing.T) {
	u := nodeClass("default", "1", 1, "NodeRoleA")
	u.SetAnnotations(map[string]string{"kubectl.kubernetes.io/last-applied-configuration": `{"spec":{}}`, "team": "payments"})
	u.SetLabels(map[string]string{"env": "prod"})
	u.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}})
	u.Object["status"] = map[string]any{"amis": []any{map[string]any{"id": "ami-0123456789abcdef0"}}}
	out, err := cluster.TrimForRules(u)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*unstructured.Unstructured)
	if got.GetManagedFields() != nil || got.Object["status"] != nil || len(got.GetAnnotations()) != 1 || got.GetAnnotations()["team"] != "payments" ||
		got.GetLabels()["env"] != "prod" || got.Object["spec"].(map[string]any)["role"] != "NodeRoleA" {
		t.Errorf("trimmed to %v", got.Object)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "aws-auth", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "eksctl"}}}, Data: map[string]string{"mapRoles": "[]"}}
	if out, err := cluster.TrimForRules(cm); err != nil || out.(*corev1.ConfigMap).ManagedFields != nil || out.(*corev1.ConfigMap).Data["mapRoles"] != "[]" {
		t.Errorf("aws-auth trimmed to %+v, %v", out, err)
	}
}
