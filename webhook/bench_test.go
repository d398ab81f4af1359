package webhook_test

import (
	"context"
	"testing"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/internal/corpus"
	"github.com/karpenter-guard/karpenter-guard/validators/rules"
	"github.com/karpenter-guard/karpenter-guard/webhook"
)

// BenchmarkValidate is one review's work without HTTP and TLS: decoding the object and evaluating the
// catalog with warm snapshot facts and a synced cluster cache of 200 EC2NodeClasses, over the
// loadgen's 200 corpus objects (half EC2NodeClasses with MIME userData, half NodePools). Its
// allocations are what the collector pays for under load.
func BenchmarkValidate(b *testing.B) {
	corpusReqs, err := corpus.AdmissionRequests(200)
	if err != nil {
		b.Fatal(err)
	}
	reqs := make([]admission.Request, len(corpusReqs))
	for i, req := range corpusReqs {
		reqs[i] = admission.Request{AdmissionRequest: req}
	}
	cluster, err := corpus.NewCluster(200)
	if err != nil {
		b.Fatal(err)
	}
	r := webhook.NewReviewer(rules.Default(), config.Default(), facts.NewSnapshot(corpus.Facts(200, 50, 100)), cluster, nil, logr.Discard())
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
