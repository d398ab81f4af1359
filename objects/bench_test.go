package objects_test

import (
	"testing"

	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/karpenter-guard/karpenter-guard/internal/corpus"
	"github.com/karpenter-guard/karpenter-guard/objects"
)

// BenchmarkFromJSON measures decoding one object of an admission review, as the API server sends it
// (the corpus's EC2NodeClass with MIME userData, and NodePool), and one object of the cluster's cache,
// whose values are already decoded.
func BenchmarkFromJSON(b *testing.B) {
	reqs, err := corpus.AdmissionRequests(2)
	if err != nil {
		b.Fatal(err)
	}
	for _, req := range reqs {
		b.Run(req.Kind.Kind, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if d, err := objects.FromJSON(req.Object.Raw, ""); err != nil || d.Object == nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(req.Kind.Kind+"/FromUnstructured", func(b *testing.B) {
			var m map[string]any
			if err := utiljson.Unmarshal(req.Object.Raw, &m); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if d, err := objects.FromUnstructured(m, ""); err != nil || d.Object == nil {
					b.Fatal(err)
				}
			}
		})
	}
}
