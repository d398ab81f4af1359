package validators_test

import (
	"context"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/internal/corpus"
	"github.com/karpenter-guard/karpenter-guard/manifest"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

// BenchmarkEvaluate measures the whole static catalog on one object (target: under 20 µs per object).
// The input set holds 100 objects, as a GitOps repository would, so cross-object rules pay their lookups.
func BenchmarkEvaluate(b *testing.B) {
	set := &manifest.Set{}
	for i := 0; i < 50; i++ {
		set.Add(manifest.Source{Path: "nc.yaml", Data: []byte(corpus.NodeClass(i))})
		set.Add(manifest.Source{Path: "np.yaml", Data: []byte(corpus.NodePool(i))})
	}
	cat := validators.Default()
	for _, bc := range []struct {
		name string
		obj  *objects.Object
	}{
		{"EC2NodeClass", set.Objects[0]},
		{"NodePool", set.Objects[1]},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c := &validators.Context{Context: context.Background(), Facts: facts.None{}, Input: set.Objects, Scope: validators.ScopeCLI}
			objs := []*objects.Object{bc.obj}
			b.ReportAllocs()
			for b.Loop() {
				cat.Evaluate(c, objs)
			}
		})
	}
}
