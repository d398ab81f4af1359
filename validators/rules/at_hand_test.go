package rules

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/manifest"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func decodeFacts(t *testing.T, data []byte) *facts.ClusterFacts {
	t.Helper()
	cf, err := facts.DecodeSnapshotFile(data)
	if err != nil {
		t.Fatal(err)
	}
	return cf
}

func readObjects(t *testing.T, doc string) []*objects.Object {
	t.Helper()
	set := &manifest.Set{}
	set.Add(manifest.Source{Path: "in.yaml", Data: []byte(doc)})
	if len(set.Errors) > 0 {
		t.Fatalf("%v", set.Errors)
	}
	return set.Objects
}

// cachedOnly is a provider that asks ahead and keeps a cache, as the live provider does: in an
// AtHandOnly context it answers only questions it was asked before, and starts the fetch of the others
// (facts.FetchNotAtHand). It counts each question it fetches, and notes every answer given at hand, as
// a provider serving a stale answer would.
type cachedOnly struct {
	facts.Provider
	mu      sync.Mutex
	cached  map[string]bool
	fetched map[string]int
	// wait, when set, is how long a fetch takes; inFlight and maxInFlight count those under way at once.
	wait                  time.Duration
	inFlight, maxInFlight int
}

func newCachedOnly(p facts.Provider, wait time.Duration) *cachedOnly {
	return &cachedOnly{Provider: p, cached: map[string]bool{}, fetched: map[string]int{}, wait: wait}
}

func (p *cachedOnly) AskAhead() bool { return true }

// at answers whether question q is answered now: outside an AtHandOnly context always (fetching it
// when not cached), inside only when it is cached, else it starts the fetch and answers not at hand.
func (p *cachedOnly) at(ctx context.Context, f facts.Fact, q string) error {
	p.mu.Lock()
	cached := p.cached[q]
	p.mu.Unlock()
	switch {
	case cached && facts.OnlyAtHand(ctx):
		facts.Note(ctx, "answered from the cache")
		return nil
	case cached:
		return nil
	case facts.OnlyAtHand(ctx):
		return facts.FetchNotAtHand(ctx, f, q, func(context.Context) bool { p.fetch(q); return false })
	}
	p.fetch(q)
	return nil
}

func (p *cachedOnly) fetch(q string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cached[q] {
		return
	}
	p.fetched[q]++
	if p.wait > 0 {
		p.inFlight++
		p.maxInFlight = max(p.maxInFlight, p.inFlight)
		p.mu.Unlock()
		time.Sleep(p.wait)
		p.mu.Lock()
		p.inFlight--
	}
	p.cached[q] = true
}

// asked returns how many fetches there were, and the questions fetched more than once.
func (p *cachedOnly) asked() (n int, twice []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for q, k := range p.fetched {
		n += k
		if k > 1 {
			twice = append(twice, q)
		}
	}
	slices.Sort(twice)
	return n, twice
}

func (p *cachedOnly) Known(ctx context.Context, f facts.Fact) error {
	if err := p.at(ctx, f, "Known "+string(f)); err != nil {
		return err
	}
	return p.Provider.Known(ctx, f)
}

func (p *cachedOnly) Cluster(ctx context.Context) (*facts.Cluster, error) {
	if err := p.at(ctx, "cluster", "Cluster"); err != nil {
		return nil, err
	}
	return p.Provider.Cluster(ctx)
}

func (p *cachedOnly) Role(ctx context.Context, name string) (*facts.Role, error) {
	if err := p.at(ctx, facts.Roles, "Role "+strings.ToLower(name)); err != nil {
		return nil, err
	}
	return p.Provider.Role(ctx, name)
}

func (p *cachedOnly) AccessEntry(ctx context.Context, r *facts.Role) (*facts.AccessEntry, error) {
	if err := p.at(ctx, facts.AccessEntries, "AccessEntry "+r.ARN); err != nil {
		return nil, err
	}
	return p.Provider.AccessEntry(ctx, r)
}

func (p *cachedOnly) SSMParameter(ctx context.Context, name string) (string, bool, error) {
	if err := p.at(ctx, facts.SSMParameters, "SSMParameter "+name); err != nil {
		return "", false, err
	}
	return p.Provider.SSMParameter(ctx, name)
}

func (p *cachedOnly) Images(ctx context.Context, t facts.ImageTerm) ([]facts.Image, error) {
	if err := p.at(ctx, facts.Images, "Images "+t.String()); err != nil {
		return nil, err
	}
	return p.Provider.Images(ctx, t)
}

func (p *cachedOnly) Simulate(ctx context.Context, row facts.SimulationRow) ([]facts.Simulation, error) {
	var b strings.Builder
	for _, q := range row.Questions() {
		b.WriteString(q.Principal + " " + q.Action + " " + q.Resource + ";")
	}
	if err := p.at(ctx, facts.Simulations, "Simulate "+b.String()); err != nil {
		return nil, err
	}
	return p.Provider.Simulate(ctx, row)
}

// outcome is what a user reads of a result: findings and the checks not evaluated, with reasons.
func outcome(r validators.Result) string {
	var b strings.Builder
	for _, f := range r.Findings {
		b.WriteString(f.Rule + " " + f.Object.Name + ": " + f.Message + "\n")
	}
	for _, n := range r.NotEvaluated {
		b.WriteString("not evaluated " + n.Rule + " " + n.Object.Name + ": " + n.Reason + "\n")
	}
	return b.String()
}

// TestEvaluateAtHandFirst: with a provider that asks ahead, a cold evaluation of the example clusters
// gives the verdicts of a provider that answers everything from memory, fetching each question once
// where a rule asks it; a warm one asks nothing and keeps its notes.
func TestEvaluateAtHandFirst(t *testing.T) {
	for _, dir := range []string{"production", "clusters/api-mode", "clusters/config-map-mode", "clusters/controller-cannot-pass-role", "clusters/isolated-subnet-no-ec2-endpoint", "clusters/network-and-ami", "clusters/untrusted-node-role"} {
		t.Run(dir, func(t *testing.T) {
			path := filepath.Join("..", "..", "examples", filepath.FromSlash(dir))
			cf := decodeFacts(t, readFile(t, filepath.Join(path, "cluster-facts.yaml")))
			set := (&manifest.Reader{MaxFileSize: manifest.DefaultMaxFileSize}).Read(context.Background(), []string{path})
			cat := Default()
			evaluate := func(p facts.Provider) validators.Result {
				return cat.Evaluate(&validators.Context{Context: context.Background(), Facts: p, Input: set.Objects, Scope: validators.ScopeCLI}, set.Objects)
			}
			want := outcome(evaluate(facts.NewSnapshot(cf)))

			p := newCachedOnly(facts.NewSnapshot(cf), 0)
			cold := evaluate(p)
			if got := outcome(cold); got != want {
				t.Errorf("cold verdicts:\n%s\nwant those of the snapshot:\n%s", got, want)
			}
			n, twice := p.asked()
			if n == 0 {
				t.Fatalf("the cold evaluation fetched nothing")
			}
			if len(twice) > 0 {
				t.Errorf("questions fetched more than once: %q", twice)
			}
			warm := evaluate(p)
			if got := outcome(warm); got != want {
				t.Errorf("warm verdicts:\n%s\nwant those of the snapshot:\n%s", got, want)
			}
			if again, _ := p.asked(); again != n {
				t.Errorf("the warm evaluation fetched %d questions; want none", again-n)
			}
			if !slices.Contains(warm.Notes, "answered from the cache") {
				t.Errorf("the warm evaluation lost the notes of its answers: %q", warm.Notes)
			}
		})
	}
}

// TestDefaultFetchesTogether: the catalog of this build has the independent questions of a cold
// evaluation fetched several at once, never more than facts.AskLimit, where the rules alone would
// ask one at a time.
func TestDefaultFetchesTogether(t *testing.T) {
	cf := decodeFacts(t, readFile(t, "../../examples/production/cluster-facts.yaml"))
	set := (&manifest.Reader{MaxFileSize: manifest.DefaultMaxFileSize}).Read(context.Background(), []string{filepath.Join("..", "..", "examples", "production")})
	p := newCachedOnly(facts.NewSnapshot(cf), 20*time.Millisecond)
	Default().Evaluate(&validators.Context{Context: context.Background(), Facts: p, Input: set.Objects, Scope: validators.ScopeCLI}, set.Objects)
	if p.maxInFlight < 2 || p.maxInFlight > facts.AskLimit {
		t.Errorf("at most %d questions fetched at once; want between 2 and facts.AskLimit (%d)", p.maxInFlight, facts.AskLimit)
	}
}

// TestNoAskingAheadFromMemory: providers that answer from memory are not asked ahead (a run on what is
// at hand would only cost time), whatever wraps them.
func TestNoAskingAheadFromMemory(t *testing.T) {
	snap := facts.NewSnapshot(&facts.ClusterFacts{})
	for _, p := range []facts.Provider{facts.None{}, snap, facts.NewRecorder(snap), facts.WithInputAWSAuth(snap, nil, false),
		facts.WithClusterNodeClasses(snap, func(context.Context) error { return nil })} {
		if facts.AsksAhead(p) {
			t.Errorf("%T asks ahead", p)
		}
	}
	if !facts.AsksAhead(facts.NewRecorder(newCachedOnly(snap, 0))) {
		t.Errorf("a recorder hides that the provider it records asks ahead")
	}
}
