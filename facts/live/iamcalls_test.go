package live_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/cache"
	"github.com/karpenter-guard/karpenter-guard/internal/fakeaws"
	"github.com/karpenter-guard/karpenter-guard/internal/livetest"
	"github.com/karpenter-guard/karpenter-guard/manifest"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/rules"
)

// platform returns copies of examples/production's EC2NodeClass and NodePool: classes × poolsPerClass
// NodePools, class-<i> used by pool-<i>-<j>, the first of them named from.
func platform(t testing.TB, w exampleWorld, from, classes, poolsPerClass int) *manifest.Set {
	t.Helper()
	var class, pool string
	for _, s := range w.sources {
		switch s.Path {
		case "ec2nodeclass.yaml":
			class = string(s.Data)
		case "nodepool.yaml":
			pool = string(s.Data)
		}
	}
	if class == "" || pool == "" {
		t.Fatal("examples/production has no ec2nodeclass.yaml or nodepool.yaml")
	}
	set := &manifest.Set{}
	for i := from; i < from+classes; i++ {
		c := strings.Replace(class, "name: production\n", fmt.Sprintf("name: class-%d\n", i), 1)
		set.Add(manifest.Source{Path: fmt.Sprintf("class-%d.yaml", i), Data: []byte(c)})
		for j := range poolsPerClass {
			p := strings.Replace(pool, "  name: production\n", fmt.Sprintf("  name: pool-%d-%d\n", i, j), 1)
			p = strings.Replace(p, "        name: production\n", fmt.Sprintf("        name: class-%d\n", i), 1)
			set.Add(manifest.Source{Path: fmt.Sprintf("pool-%d-%d.yaml", i, j), Data: []byte(p)})
		}
	}
	return set
}

// iamCalls counts the IAM requests the fake has served, by operation.
func iamCalls(srv *fakeaws.Server) (int, string) {
	total := 0
	var parts []string
	for _, op := range fakeaws.Operations {
		if strings.HasPrefix(op, "iam:") {
			if n := srv.Calls(op); n > 0 {
				total += n
				parts = append(parts, fmt.Sprintf("%s %d", strings.TrimPrefix(op, "iam:"), n))
			}
		}
	}
	slices.Sort(parts)
	return total, strings.Join(parts, ", ")
}

// withAWSAuth gives p the world's aws-auth ConfigMap, as the cluster's watch does.
func (w exampleWorld) withAWSAuth(t testing.TB, p facts.Provider) facts.Provider {
	t.Helper()
	set := &manifest.Set{}
	for _, s := range w.sources {
		if s.Path == "aws-auth.yaml" {
			set.Add(s)
		}
	}
	auth, malformed, ok := validators.InputAWSAuth(set.Objects)
	if !ok {
		t.Fatal("examples/production has no aws-auth.yaml")
	}
	return facts.WithInputAWSAuth(p, auth, malformed)
}

// judge evaluates objs as one run (a check, an audit cycle), every stored object an input.
func judge(t testing.TB, p facts.Provider, input, objs []*objects.Object) validators.Result {
	t.Helper()
	c := &validators.Context{Context: context.Background(), Config: config.Default(), Facts: p, Input: input, Scope: validators.ScopeCLI}
	res := rules.Default().Evaluate(c, objs)
	if len(res.NotEvaluated) > 0 {
		t.Fatalf("not evaluated: %+v", res.NotEvaluated[0])
	}
	return res
}

// TestIAMCallsPerDistinctAnswer: what judging a platform costs in IAM requests, with Karpenter's own
// controller policy (examples/production): a cold check of 5 EC2NodeClasses × 10 NodePools, the first
// audit of 50 × 20, the same audit ten minutes later with nothing changed, and a review of a new class
// with its 20 NodePools on that warm cluster. The figures go into BENCHMARKS.md; the bounds are the
// ones the project holds itself to.
func TestIAMCallsPerDistinctAnswer(t *testing.T) {
	w := loadExample(t, "production", "examples/production", func(s string) string { return s })
	for _, tc := range []struct {
		name           string
		classes, pools int
		max            int
	}{
		{"cold check, 5 classes × 10 pools", 5, 10, 60},
		{"first audit, 50 classes × 20 pools", 50, 20, 300},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := livetest.NewClock()
			srv := fakeaws.New(w.cf, fakeaws.WithPolicies(w.policies))
			p := w.withAWSAuth(t, livetest.NewProvider(t, srv.Start(t), w.cf, livetest.Options{Cache: cache.Options{Now: clock.Now}}))
			set := platform(t, w, 0, tc.classes, tc.pools)
			judge(t, p, set.Objects, set.Objects)
			n, by := iamCalls(srv)
			t.Logf("%d objects: %d IAM calls (%s)", len(set.Objects), n, by)
			if n > tc.max {
				t.Errorf("%d IAM calls, want at most %d", n, tc.max)
			}
			if tc.classes < 50 {
				return
			}
			srv.ResetCalls()
			clock.Add(10 * time.Minute)
			judge(t, p, set.Objects, set.Objects)
			n, by = iamCalls(srv)
			t.Logf("the same audit 10 minutes later: %d IAM calls (%s)", n, by)
			if n > 20 {
				t.Errorf("%d IAM calls for an audit with nothing changed, want at most 20", n)
			}
			srv.ResetCalls()
			added := platform(t, w, 50, 1, 20)
			all := append(slices.Clone(set.Objects), added.Objects...)
			judge(t, p, all, added.Objects[:1])
			n, by = iamCalls(srv)
			t.Logf("a review of a new class with 20 NodePools: %d IAM calls (%s)", n, by)
			if n > 25 {
				t.Errorf("%d IAM calls for the review of a new class, want at most 25", n)
			}
		})
	}
}

// BenchmarkIAMCallsAsWritten is TestIAMCallsPerDistinctAnswer's cold check and first audit with the
// roles' policies unreadable, so that every row is simulated as written (as before rows were shared):
// the figures BENCHMARKS.md sets beside the shared ones.
//
//	go test -run '^$' -bench IAMCallsAsWritten -benchtime 1x ./facts/live
func BenchmarkIAMCallsAsWritten(b *testing.B) {
	w := loadExample(b, "production", "examples/production", func(s string) string { return s })
	for _, size := range []struct{ classes, pools int }{{5, 10}, {50, 20}} {
		b.Run(fmt.Sprintf("%dx%d", size.classes, size.pools), func(b *testing.B) {
			for b.Loop() {
				srv := fakeaws.New(w.cf, fakeaws.WithPolicies(w.policies))
				srv.Inject("iam:ListRolePolicies", fakeaws.Fault{AccessDenied: true})
				p := w.withAWSAuth(b, livetest.NewProvider(b, srv.Start(b), w.cf, livetest.Options{}))
				set := platform(b, w, 0, size.classes, size.pools)
				judge(b, p, set.Objects, set.Objects)
				n, by := iamCalls(srv)
				b.ReportMetric(float64(n), "iam-calls")
				b.Logf("%d objects, policies unreadable: %d IAM calls (%s)", len(set.Objects), n, by)
				srv.ResetCalls()
				added := platform(b, w, size.classes, 1, 20)
				judge(b, p, append(slices.Clone(set.Objects), added.Objects...), added.Objects[:1])
				n, by = iamCalls(srv)
				b.Logf("then a review of a new class with 20 NodePools: %d IAM calls (%s)", n, by)
			}
		})
	}
}
