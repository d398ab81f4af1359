package corpus

import (
	"encoding/json"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	sigsyaml "sigs.k8s.io/yaml"
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
