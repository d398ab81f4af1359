package objects_test

import (
	"testing"

	"github.com/karpenter-guard/karpenter-guard/internal/corpus"
	"github.com/karpenter-guard/karpenter-guard/objects"
)

// BenchmarkFromJSON measures decoding one object of an admission review: the corpus's EC2NodeClass
// (with MIME userData) and NodePool, as the API server sends them.
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
		// As the webhook reads objects: into an arena reset after each review.
		b.Run(req.Kind.Kind+"/Arena", func(b *testing.B) {
			b.ReportAllocs()
			var a objects.Arena
			for b.Loop() {
				if d, err := objects.FromJSONIn(&a, req.Object.Raw, ""); err != nil || d.Object == nil {
					b.Fatal(err)
				}
				a.Reset()
			}
		})
	}
}
