package live_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/internal/corpus"
	"github.com/karpenter-guard/karpenter-guard/internal/fakeaws"
	"github.com/karpenter-guard/karpenter-guard/internal/livetest"
	"github.com/karpenter-guard/karpenter-guard/manifest"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/rules"
)

// sharedClasses returns n EC2NodeClasses (corpus shapes) that share 5 node roles and 3 AMI
// selectors: the pinned AL2023 alias, a name pattern with its owner, and the recommended alias.
func sharedClasses(n int) *manifest.Set {
	amis := []string{
		"    - alias: al2023@v20251112\n",
		"    - name: amazon-eks-node-al2023-x86_64-standard-1.33-*\n      owner: amazon\n",
		"    - alias: al2023@latest\n",
	}
	set := &manifest.Set{}
	for i := 0; i < n; i++ {
		doc := corpus.NodeClass(i)
		doc = strings.Replace(doc, fmt.Sprintf("role: KarpenterNodeRole-team-%d\n", i%13), fmt.Sprintf("role: KarpenterNodeRole-team-%d\n", i%5), 1)
		start := strings.Index(doc, "  amiSelectorTerms:\n") + len("  amiSelectorTerms:\n")
		end := strings.Index(doc, "  role: ")
		doc = doc[:start] + amis[i%3] + doc[end:]
		set.Add(manifest.Source{Path: fmt.Sprintf("class-%d.yaml", i), Data: []byte(doc)})
	}
	return set
}

// benchFacts is the corpus's cluster with the recommended AL2023 parameter too, and the identity facts
// the permission rules need (corpus.WithIdentities; without policies the fake answers every
// simulation with an implicit deny, which costs the same calls).
func benchFacts() *facts.ClusterFacts {
	cf := corpus.Facts(200, 50, 100)
	(*cf.SSMParameters)["/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/recommended/image_id"] = "ami-0al2023x86"
	(*cf.SSMParameters)["/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/arm64/standard/recommended/image_id"] = "ami-0al2023arm"
	corpus.WithNetwork(corpus.WithIdentities(cf), nil)
	return cf
}

// rowCounter counts the distinct simulation rows asked of the provider it wraps.
type rowCounter struct {
	facts.Provider
	mu   sync.Mutex
	rows map[string]bool
}

func (c *rowCounter) AskAhead() bool { return facts.AsksAhead(c.Provider) }

func (c *rowCounter) Simulate(ctx context.Context, row facts.SimulationRow) ([]facts.Simulation, error) {
	c.mu.Lock()
	c.rows[row.Key()] = true
	c.mu.Unlock()
	return c.Provider.Simulate(ctx, row)
}

// evaluateEach evaluates every object on its own, as the webhook reviews them, rounds times over.
func evaluateEach(tb testing.TB, cat *validators.Catalog, p facts.Provider, objs []*objects.Object, reviews int) {
	tb.Helper()
	for i := 0; i < reviews; i++ {
		o := objs[i%len(objs)]
		res := cat.Evaluate(&validators.Context{Context: context.Background(), Facts: p, Input: objs, Scope: validators.ScopeAll}, []*objects.Object{o})
		if len(res.NotEvaluated) > 0 {
			tb.Fatalf("review %d of %s: not evaluated: %+v", i, o.Name, res.NotEvaluated)
		}
	}
}

// TestCallsPerDistinctQuestion: 1,000 reviews of 50 EC2NodeClasses that share 5 roles and 3 AMI
// selectors make one AWS call per distinct question within the TTL, however many reviews ask it.
// The figures go into BENCHMARKS.md.
func TestCallsPerDistinctQuestion(t *testing.T) {
	env := start(t, benchFacts(), livetest.Options{})
	set := sharedClasses(50)
	rows := &rowCounter{Provider: env.Provider, rows: map[string]bool{}}
	evaluateEach(t, rules.Default(), rows, set.Objects, 1000)
	if len(rows.rows) == 0 {
		t.Fatal("no simulation asked: the permission rules did not run")
	}
	want := map[string]int{
		"iam:SimulatePrincipalPolicy":        len(rows.rows) + 1, // one per distinct row, and the probe
		"eks:ListPodIdentityAssociations":    1 + 1,              // aws-node's (the controller has IRSA), and the cluster's count
		"eks:DescribePodIdentityAssociation": 0,                  // aws-node has none
		"eks:DescribeCluster":                1,
		"eks:ListAccessEntries":              1,
		"eks:DescribeAccessEntry":            5,         // one per role
		"iam:GetRole":                        5 + 1 + 6, // one per role, the permission probe, and the six roles' (the controller's too) for reading their policies
		"iam:ListRolePolicies":               6,         // the policies of the 5 node roles and the controller's role, once each
		"iam:ListAttachedRolePolicies":       6,
		"iam:GetInstanceProfile":             1,         // the probe: spec.role names roles, not profiles
		"ssm:GetParameter":                   4,         // pinned and recommended alias × 2 architectures (no rule needs the probe)
		"ec2:DescribeImages":                 2 + 1 + 1, // the 2 images all four parameters name, the name term, and the probe
		"ec2:DescribeSubnets":                1 + 2 + 1, // the one subnet selector, the two control-plane subnets, and the probe
		"ec2:DescribeRouteTables":            1 + 1,     // the one VPC, and the probe
		"ec2:DescribeSecurityGroups":         1 + 1 + 1, // the one group selector, the cluster security group, and the probe
		"ec2:DescribeVpcAttribute":           2,         // DNS support and DNS hostnames: the private endpoint is on
		"ec2:DescribeNatGateways":            0,         // the public endpoint admits every address
		"ec2:DescribeVpcEndpoints":           0,         // every subnet has a NAT gateway
		"ec2:DescribeCapacityReservations":   0,         // no class selects reservations
		"kms:DescribeKey":                    0,         // the default EBS key is AWS's own
		"ec2:DescribeInstanceTypes":          0,         // no NodePool reviewed
		"sts:GetCallerIdentity":              0,
	}
	var report []string
	total := 0
	for _, op := range fakeaws.Operations {
		got := env.Fake.Calls(op)
		total += got
		report = append(report, fmt.Sprintf("%s %d", op, got))
		if w, ok := want[op]; ok && got != w {
			t.Errorf("%s: %d calls for 1,000 reviews, want %d (one per distinct question)", op, got, w)
		}
	}
	sort.Strings(report)
	t.Logf("calls for 1,000 reviews of 50 EC2NodeClasses (5 roles, 3 AMI selectors): %d in all: %s", total, strings.Join(report, ", "))
}

// BenchmarkLookupCold is one question asked of a new provider: the SDK's request through HTTP to the
// fake and back, with the cache's bookkeeping.
func BenchmarkLookupCold(b *testing.B) {
	cf := benchFacts()
	srv := fakeaws.New(cf)
	url := srv.Start(b)
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		p := livetest.NewProvider(b, url, cf, livetest.Options{})
		b.StartTimer()
		if r, err := p.Role(ctx, "KarpenterNodeRole-team-1"); err != nil || r == nil {
			b.Fatal(r, err)
		}
		b.StopTimer()
		p.Close()
		b.StartTimer()
	}
}

// BenchmarkLookupWarm is the same question answered from the cache.
func BenchmarkLookupWarm(b *testing.B) {
	env := start(b, benchFacts(), livetest.Options{})
	ctx := context.Background()
	if _, err := env.Provider.Role(ctx, "KarpenterNodeRole-team-1"); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if r, err := env.Provider.Role(ctx, "KarpenterNodeRole-team-1"); err != nil || r == nil {
			b.Fatal(r, err)
		}
	}
}

// BenchmarkEvaluateWarm reviews one EC2NodeClass at a time with every fact cached, through the live
// provider and through the snapshot provider of the same world (target: live within 2× snapshot).
func BenchmarkEvaluateWarm(b *testing.B) {
	cf := benchFacts()
	set := sharedClasses(50)
	cat := rules.Default()
	env := start(b, cf, livetest.Options{})
	// The snapshot holds the simulator's answers to the rules' questions, as `facts export` records them.
	rec := facts.NewRecorder(env.Provider)
	evaluateEach(b, cat, rec, set.Objects, len(set.Objects))
	snap := *cf
	snap.Simulations = rec.Snapshot().Simulations
	for _, bc := range []struct {
		name string
		p    facts.Provider
	}{{"snapshot", facts.NewSnapshot(&snap)}, {"live", env.Provider}} {
		b.Run(bc.name, func(b *testing.B) {
			evaluateEach(b, cat, bc.p, set.Objects, len(set.Objects)) // warm every question
			i := 0
			for b.Loop() {
				o := set.Objects[i%len(set.Objects)]
				cat.Evaluate(&validators.Context{Context: context.Background(), Facts: bc.p, Input: set.Objects, Scope: validators.ScopeAll}, []*objects.Object{o})
				i++
			}
		})
	}
}

// BenchmarkColdReview reviews one EC2NodeClass that needs every fact (everyFactClass) on a new provider,
// nothing cached, against an AWS fake that answers every call after 100 ms: asking ahead (the engine's
// default with the live provider) and one question at a time (as before). calls/op counts the AWS
// requests of one review and sum-ms/op what they cost one after another (calls × 100 ms), to compare
// with ns/op. The figures go into BENCHMARKS.md.
func BenchmarkColdReview(b *testing.B) {
	const latency = 100 * time.Millisecond
	cf, err := facts.DecodeSnapshotFile([]byte(world))
	if err != nil {
		b.Fatal(err)
	}
	objs := readClass(b, everyFactClass)
	srv := fakeaws.New(cf)
	srv.Inject("*", fakeaws.Fault{Latency: latency})
	url := srv.Start(b)
	for _, bc := range []struct {
		name  string
		ahead bool
	}{{"ahead", true}, {"one-by-one", false}} {
		b.Run(bc.name, func(b *testing.B) {
			calls := 0
			for b.Loop() {
				b.StopTimer()
				p := newProvider(b, url, cf, livetest.Options{})
				var fp facts.Provider = p
				if !bc.ahead {
					fp = sequential{p}
				}
				before := srv.Calls("*")
				b.StartTimer()
				res := review(fp, objs)
				b.StopTimer()
				calls += srv.Calls("*") - before
				if len(res.NotEvaluated) > 0 {
					b.Fatalf("not evaluated: %+v", res.NotEvaluated)
				}
				p.Close()
				b.StartTimer()
			}
			perReview := float64(calls) / float64(b.N)
			b.ReportMetric(perReview, "calls/op")
			b.ReportMetric(perReview*float64(latency.Milliseconds()), "sum-ms/op")
		})
	}
}
