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

// counter is a Resource whose value says which New made it.
type counter struct{ made int }

// TestSharedOutlivesAnEvaluation: a Resource's value is made once per catalog, kept across its
// evaluations and shared with its Subsets; another catalog has its own.
func TestSharedOutlivesAnEvaluation(t *testing.T) {
	made := 0
	res := &validators.Resource[*counter]{Name: "counter", New: func() *counter { made++; return &counter{made} }}
	var seen []*counter
	rule := &validators.Rule{ID: "uses-a-resource", Kinds: []string{validators.KindNodePool}, DefaultAction: config.ActionWarn,
		Summary: "records the resource", Doc: "A test rule.",
		Check: func(c *validators.Context, _ *objects.Object) ([]validators.Finding, error) {
			seen = append(seen, validators.Shared(c, res))
			return nil, nil
		}}
	pool := &objects.Object{Kind: objects.KindNodePool, Name: "p", NodePool: &objects.NodePool{}, Fields: objects.Map{}}
	evaluate := func(cat *validators.Catalog) {
		cat.Evaluate(&validators.Context{Context: context.Background(), Config: config.Default(), Facts: facts.None{}}, []*objects.Object{pool})
	}
	cat := validators.NewCatalog(rule)
	evaluate(cat)
	evaluate(cat)
	evaluate(cat.Subset(rule))
	evaluate(validators.NewCatalog(rule))
	if len(seen) != 4 {
		t.Fatalf("the rule ran %d times, want 4", len(seen))
	}
	if seen[0] != seen[1] || seen[0] != seen[2] {
		t.Errorf("evaluations of one catalog and its Subset got different values: %d, %d, %d", seen[0].made, seen[1].made, seen[2].made)
	}
	if seen[3] == seen[0] || made != 2 {
		t.Errorf("another catalog shares the value (made %d times)", made)
	}
}
