package webhook_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/internal/corpus"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/webhook"
)

// BenchmarkValidate is one review's work without HTTP and TLS: decoding the object and evaluating the
// catalog with warm snapshot facts, over the loadgen's 200 corpus objects (half EC2NodeClasses with
// MIME userData, half NodePools). Its allocations are what the collector pays for under load.
func BenchmarkValidate(b *testing.B) {
	var reqs []admission.Request
	for i := 0; i < 200; i++ {
		doc, kind, group := corpus.NodeClass(i), "EC2NodeClass", "karpenter.k8s.aws"
		if i%2 == 1 {
			doc, kind, group = corpus.NodePool(i), "NodePool", "karpenter.sh"
		}
		obj, err := sigsyaml.YAMLToJSON([]byte(doc))
		if err != nil {
			b.Fatal(err)
		}
		var meta struct{ Metadata metav1.ObjectMeta }
		if err := json.Unmarshal(obj, &meta); err != nil {
			b.Fatal(err)
		}
		reqs = append(reqs, admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{UID: "bench", Name: meta.Metadata.Name,
			Kind: metav1.GroupVersionKind{Group: group, Version: "v1", Kind: kind}, Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: obj}}})
	}
	r := webhook.NewReviewer(validators.Default(), config.Default(), facts.NewSnapshot(corpus.Facts(200, 50, 100)), nil, nil, logr.Discard())
	ctx := context.Background()
	if resp := r.Validate(ctx, reqs[0]); resp.Result == nil {
		b.Fatalf("no verdict: %+v", resp)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		r.Validate(ctx, reqs[i%len(reqs)])
		i++
	}
}
