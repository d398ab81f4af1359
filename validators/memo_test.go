package validators_test

import (
	"context"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

var (
	lengths = &validators.Analysis[string, int]{Name: "length"}
	doubled = &validators.Analysis[string, int]{Name: "doubled length"}
)

// TestMemo: an analysis is computed once per key, analyses with the same key types are kept apart, and
// a Context that was never evaluated memoises too.
func TestMemo(t *testing.T) {
	c := &validators.Context{}
	computed := map[string]int{}
	length := func(a *validators.Analysis[string, int], k string, factor int) int {
		return validators.Memo(c, a, k, func() int {
			computed[a.Name+" "+k]++
			return factor * len(k)
		})
	}
	for range 2 {
		for _, k := range []string{"a", "bb", "ccc"} {
			if got := length(lengths, k, 1); got != len(k) {
				t.Errorf("length of %q = %d", k, got)
			}
			if got := length(doubled, k, 2); got != 2*len(k) {
				t.Errorf("doubled length of %q = %d", k, got)
			}
		}
	}
	for k, n := range computed {
		if n != 1 {
			t.Errorf("%s computed %d times, want once", k, n)
		}
	}
	if len(computed) != 6 {
		t.Errorf("%d results computed, want 6", len(computed))
	}
}

// TestMemoLastsOneRun: each run over the objects starts with an empty memo, so a Context evaluated
// again (the benchmarks, the run on what is at hand then the real one) never serves an old result.
func TestMemoLastsOneRun(t *testing.T) {
	runs := &validators.Analysis[*objects.Object, int]{Name: "runs"}
	n := 0
	count := &validators.Rule{ID: "count", Kinds: []string{validators.KindEC2NodeClass}, DefaultAction: config.ActionWarn, Summary: "test", Doc: "test",
		Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
			validators.Memo(c, runs, o, func() int { n++; return n })
			validators.Memo(c, runs, o, func() int { n++; return n })
			return nil, nil
		}}
	cat := validators.NewCatalog(count)
	objs := read(t, nodeClass)
	c := &validators.Context{Context: context.Background(), Facts: facts.None{}, Input: objs, Scope: validators.ScopeCLI}
	cat.Evaluate(c, objs)
	cat.Evaluate(c, objs)
	if n != 2 {
		t.Errorf("computed %d times over two evaluations, want 2", n)
	}
}
