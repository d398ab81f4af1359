package validators_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/internal/corpus"
	"github.com/karpenter-guard/karpenter-guard/manifest"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/rules"
)

// nodeClass is a clean v1 EC2NodeClass; tests append spec lines.
const nodeClass = `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: lab
spec:
  amiSelectorTerms:
    - alias: al2023@v20251112
  role: KarpenterNodeRole-prod
  subnetSelectorTerms:
    - tags:
        karpenter.sh/discovery: prod
  securityGroupSelectorTerms:
    - tags:
        karpenter.sh/discovery: prod
`

// imdsV1 is nodeClass allowing IMDSv1 (imds-v1-enabled fires).
const imdsV1 = nodeClass + "  metadataOptions:\n    httpTokens: optional\n"

func read(t *testing.T, in string) []*objects.Object {
	t.Helper()
	set := &manifest.Set{}
	set.Add(manifest.Source{Path: "in.yaml", Data: []byte(in)})
	if len(set.Errors) > 0 {
		t.Fatalf("input errors: %v", set.Errors)
	}
	return set.Objects
}

func evaluate(t *testing.T, cat *validators.Catalog, cfg *config.Config, p facts.Provider, in string) validators.Result {
	t.Helper()
	objs := read(t, in)
	return cat.Evaluate(&validators.Context{Context: context.Background(), Config: cfg, Facts: p, Input: objs, Scope: validators.ScopeCLI}, objs)
}

// TestConfigOverridesActions: the configuration file changes a rule's action or turns it off.
func TestConfigOverridesActions(t *testing.T) {
	cat := rules.Default()
	for _, tc := range []struct {
		cfg  string
		want config.Action
	}{
		{"", config.ActionWarn},
		{"rules:\n  imds-v1-enabled: deny\n", config.ActionDeny},
		{"rules:\n  imds-v1-enabled: audit\n", config.ActionAudit},
		{"rules:\n  imds-v1-enabled: off\n", ""},
	} {
		cfg, err := config.Parse([]byte("apiVersion: karpenter-guard.io/v1alpha1\nkind: GuardConfig\n"+tc.cfg), cat.IDs())
		if err != nil {
			t.Fatal(err)
		}
		var got config.Action
		for _, f := range evaluate(t, cat, cfg, facts.None{}, imdsV1).Findings {
			if f.Rule == "imds-v1-enabled" {
				got = f.Action
			}
		}
		if got != tc.want {
			t.Errorf("config %q: action %q, want %q", tc.cfg, got, tc.want)
		}
	}
}

// TestNotEvaluatedReasonFollowsTheProvider: the catalog reuses the reason it composed for a rule's
// unknown facts only while the provider gives the same reasons, so one catalog shared by many
// evaluations (the webhook's) never reports a stale reason.
func TestNotEvaluatedReasonFollowsTheProvider(t *testing.T) {
	cat := rules.Default()
	noRoles := corpus.Facts(10, 4, 4)
	noRoles.Roles = nil
	reason := func(p facts.Provider) string {
		for _, n := range evaluate(t, cat, nil, p, nodeClass).NotEvaluated {
			if n.Rule == "node-role-not-found" {
				return n.Reason
			}
		}
		return ""
	}
	for i, tc := range []struct {
		p    facts.Provider
		want string
	}{
		{facts.None{}, "no facts: roles"},
		{facts.NewSnapshot(noRoles), "not in the facts snapshot: roles"},
		{facts.NewSnapshot(corpus.Facts(10, 4, 4)), ""},
		{facts.None{}, "no facts: roles"},
	} {
		if got := reason(tc.p); got != tc.want {
			t.Errorf("evaluation %d: node-role-not-found reason %q, want %q", i+1, got, tc.want)
		}
	}
}

// TestSkipIsRecorded checks that a skipped rule neither fires nor disappears: it is listed as skipped
// with its reason.
func TestSkipIsRecorded(t *testing.T) {
	in := strings.Replace(imdsV1, "metadata:\n", "metadata:\n  annotations:\n    karpenter-guard.io/skip: imds-v1-enabled\n    karpenter-guard.io/skip-reason: lab nodes run a legacy agent\n", 1)
	res := evaluate(t, rules.Default(), nil, facts.None{}, in)
	for _, f := range res.Findings {
		if f.Rule == "imds-v1-enabled" {
			t.Fatalf("skipped rule still fired: %+v", f)
		}
	}
	if len(res.Skipped) != 1 || res.Skipped[0].Rule != "imds-v1-enabled" || res.Skipped[0].Reason != "karpenter-guard.io/skip: lab nodes run a legacy agent" {
		t.Fatalf("skipped = %+v, want imds-v1-enabled with its reason", res.Skipped)
	}
}

// TestCheckErrors: a rule whose Check returns an error is reported as not evaluated on that object,
// with the error's text, and its findings are dropped: an unknown fact gives the fact's reason as the
// cause, any other error (a bug in the rule) its own text. A rule that judged part of the object
// (PartlyEvaluated) keeps its findings and is not evaluated too. Other rules and objects are not
// affected.
func TestCheckErrors(t *testing.T) {
	rule := func(id string, err error) *validators.Rule {
		return &validators.Rule{ID: id, Kinds: []string{validators.KindEC2NodeClass}, DefaultAction: config.ActionDeny,
			Summary: "test", Doc: "test",
			Check: func(_ *validators.Context, o *objects.Object) ([]validators.Finding, error) {
				return []validators.Finding{{Field: "spec", Message: id + " on " + o.Name}}, err
			}}
	}
	unknown := facts.Unknown(facts.AWSAuth, "AWS denied eks:DescribeAccessEntry")
	cat := validators.NewCatalog(
		rule("fires", nil),
		rule("meets-an-unknown-fact", unknown),
		rule("has-a-bug", errors.New("index out of range")),
		rule("judges-part", &validators.PartlyEvaluated{Err: facts.Unknown(facts.EBSDefaults, "no facts")}),
	)
	res := evaluate(t, cat, nil, facts.None{}, nodeClass)
	if len(res.Findings) != 2 || res.Findings[0].Rule != "fires" || res.Findings[0].Message != "fires on lab" ||
		res.Findings[1].Rule != "judges-part" || res.Findings[1].Message != "judges-part on lab" || res.Findings[1].Action != config.ActionDeny {
		t.Errorf("findings %+v, want those of the rule without error and of the rule that judged part", res.Findings)
	}
	want := map[string]validators.NotEvaluated{
		"meets-an-unknown-fact": {Reason: "AWS denied eks:DescribeAccessEntry: awsAuth", Causes: []string{"AWS denied eks:DescribeAccessEntry"}},
		"has-a-bug":             {Reason: "index out of range", Causes: []string{"index out of range"}},
		"judges-part":           {Reason: "no facts: ebsDefaults", Causes: []string{"no facts"}},
	}
	if len(res.NotEvaluated) != len(want) {
		t.Fatalf("not evaluated: %+v, want %d", res.NotEvaluated, len(want))
	}
	for _, n := range res.NotEvaluated {
		w, ok := want[n.Rule]
		if !ok || n.Object.Name != "lab" || n.Reason != w.Reason || strings.Join(n.Causes, "; ") != strings.Join(w.Causes, "; ") {
			t.Errorf("not evaluated: %+v, want %+v", n, w)
		}
	}
}

// remote answers from its cache and fetches the rest, as the live provider does: in an AtHandOnly
// context a question not cached starts its fetch (facts.FetchNotAtHand) and is not at hand. A fetch
// waits until `together` fetches run at once (or a few seconds pass), so that peak says how many it
// ran together on any machine; with hang set, fetches never answer and a question asked outside an
// AtHandOnly context waits for its context to end.
type remote struct {
	facts.None
	together int
	hang     bool

	mu            sync.Mutex
	cached        map[string]bool
	fetched       map[string]int
	running, peak int
	full          chan struct{}
	once          sync.Once
}

func newRemote(together int) *remote {
	return &remote{together: together, cached: map[string]bool{}, fetched: map[string]int{}, full: make(chan struct{})}
}

func (*remote) AskAhead() bool { return true }

func (p *remote) ask(ctx context.Context, f facts.Fact, q string) error {
	p.mu.Lock()
	cached := p.cached[q]
	p.mu.Unlock()
	switch {
	case cached:
		return nil
	case facts.OnlyAtHand(ctx):
		return facts.FetchNotAtHand(ctx, f, q, func(ctx context.Context) bool { return !p.fetch(ctx, q) })
	case p.hang:
		<-ctx.Done()
		return facts.Unknown(f, "no answer in time")
	}
	p.fetch(ctx, q)
	return nil
}

// fetch answers q, unless the remote hangs; it reports whether it answered.
func (p *remote) fetch(ctx context.Context, q string) bool {
	if p.hang {
		<-ctx.Done()
		return false
	}
	p.mu.Lock()
	p.fetched[q]++
	p.running++
	p.peak = max(p.peak, p.running)
	if p.running == p.together {
		p.once.Do(func() { close(p.full) })
	}
	p.mu.Unlock()
	select {
	case <-p.full:
	case <-time.After(3 * time.Second): // not fetched together: peak says so
	}
	p.mu.Lock()
	p.running--
	p.cached[q] = true
	p.mu.Unlock()
	return true
}

// Known answers at hand: every fact can be had.
func (*remote) Known(context.Context, facts.Fact) error { return nil }

func (p *remote) Role(ctx context.Context, name string) (*facts.Role, error) {
	if err := p.ask(ctx, facts.Roles, "role "+name); err != nil {
		return nil, err
	}
	return &facts.Role{Name: name, ARN: "arn:aws:iam::111122223333:role/" + name}, nil
}

func (p *remote) AccessEntry(ctx context.Context, r *facts.Role) (*facts.AccessEntry, error) {
	if err := p.ask(ctx, facts.AccessEntries, "entry "+r.ARN); err != nil {
		return nil, err
	}
	return &facts.AccessEntry{PrincipalARN: r.ARN, Type: "EC2_LINUX"}, nil
}

// roleOf is an analysis rules share: the role an EC2NodeClass names.
var roleOf = &validators.Analysis[string, roleAnswer]{Name: "role"}

type roleAnswer struct {
	role *facts.Role
	err  error
}

// entryRule needs the roles fact, reads its class's role through a shared analysis, then the role's
// access entry: three levels of dependent questions.
var entryRule = &validators.Rule{ID: "entry", Kinds: []string{validators.KindEC2NodeClass}, DefaultAction: config.ActionDeny,
	Summary: "test", Doc: "test", Needs: []facts.Fact{facts.Roles},
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		ans := validators.Memo(c, roleOf, o.NodeClass.Spec.Role, func() roleAnswer {
			r, err := c.Facts.Role(c, o.NodeClass.Spec.Role)
			return roleAnswer{r, err}
		})
		if ans.err != nil {
			return nil, ans.err
		}
		if _, err := c.Facts.AccessEntry(c, ans.role); err != nil {
			return nil, err
		}
		return []validators.Finding{{Field: "spec.role", Message: "entry of " + ans.role.Name}}, nil
	}}

// classes returns EC2NodeClasses named class-0 … class-n-1; the first two share a role.
func classes(n int) string {
	var b strings.Builder
	for i := range n {
		role := fmt.Sprintf("role-%d", i)
		if i < 2 {
			role = "shared"
		}
		fmt.Fprintf(&b, "---\napiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: class-%d\nspec:\n  role: %s\n", i, role)
	}
	return b.String()
}

// TestRoundsFetchEachLevelTogether: with a provider whose answers are not at hand and a catalog that
// states nothing of what its rules will ask, a cold evaluation fetches every independent question of a
// level together (the classes' roles at once, then their access entries at once), each question once,
// and judges every object on the answers: a result read from a memo or a fact whose answer was not at
// hand is never the verdict.
func TestRoundsFetchEachLevelTogether(t *testing.T) {
	const n = 5 // 4 distinct roles, then 4 access entries: at most AskLimit at once
	p := newRemote(n - 1)
	passes := &validators.Rule{ID: "passes", Kinds: []string{validators.KindEC2NodeClass}, DefaultAction: config.ActionDeny,
		Summary: "test", Doc: "test", Check: func(*validators.Context, *objects.Object) ([]validators.Finding, error) { return nil, nil }}
	objs := read(t, classes(n))
	res := validators.NewCatalog(entryRule, passes).Evaluate(&validators.Context{Context: context.Background(), Facts: p, Input: objs, Scope: validators.ScopeCLI, MaxPassed: 2}, objs)
	if len(res.NotEvaluated) > 0 || len(res.Findings) != n {
		t.Fatalf("%d findings, not evaluated %+v; want a finding per class and nothing not evaluated", len(res.Findings), res.NotEvaluated)
	}
	// The passes of runs thrown away for an answer not at hand are neither counted nor listed.
	if res.PassedCount != n || len(res.Passed) != 2 {
		t.Errorf("%d passes, %d listed; want %d, and MaxPassed (2) listed", res.PassedCount, len(res.Passed), n)
	}
	for q, k := range p.fetched {
		if k != 1 {
			t.Errorf("%s fetched %d times, want once", q, k)
		}
	}
	if want := 2 * (n - 1); len(p.fetched) != want {
		t.Errorf("%d questions fetched, want %d (%d roles, %d access entries)", len(p.fetched), want, n-1, n-1)
	}
	if p.peak < n-1 || p.peak > facts.AskLimit {
		t.Errorf("at most %d questions fetched at once; want %d to facts.AskLimit (every question of a level together)", p.peak, n-1)
	}
	p.fetched = map[string]int{}
	if warm := evaluate(t, validators.NewCatalog(entryRule), nil, p, classes(n)); len(warm.Findings) != n || len(p.fetched) != 0 {
		t.Errorf("warm: %d findings, %d fetches; want %d findings and no fetch", len(warm.Findings), len(p.fetched), n)
	}
}

// TestRoundsStopAtTheDeadline: when the provider does not answer before the evaluation's deadline,
// the rules that need its answers are reported as not evaluated, never as passed or denied.
func TestRoundsStopAtTheDeadline(t *testing.T) {
	p := newRemote(1)
	p.hang = true
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	objs := read(t, classes(3))
	res := validators.NewCatalog(entryRule).Evaluate(&validators.Context{Context: ctx, Facts: p, Input: objs, Scope: validators.ScopeCLI, MaxPassed: 10}, objs)
	if len(res.Findings) != 0 || res.PassedCount != 0 || len(res.NotEvaluated) != 3 {
		t.Fatalf("findings %+v, %d passed, not evaluated %+v; want the rule not evaluated for each class", res.Findings, res.PassedCount, res.NotEvaluated)
	}
	for _, ne := range res.NotEvaluated {
		if strings.Contains(ne.Reason, "not at hand") {
			t.Errorf("not evaluated %q: a reason of the run on what is at hand", ne.Reason)
		}
	}
}

// TestAtMostCapsAFinding: a finding marked AtMost warn is a warning under a deny rule, and the cap never
// raises an action the configuration lowered.
func TestAtMostCapsAFinding(t *testing.T) {
	maybe := &validators.Rule{ID: "maybe", Kinds: []string{validators.KindEC2NodeClass}, DefaultAction: config.ActionDeny,
		Summary: "s", Doc: "d", Check: func(*validators.Context, *objects.Object) ([]validators.Finding, error) {
			return []validators.Finding{{Field: "spec", Message: "certain"}, {Field: "spec", Message: "possible", AtMost: config.ActionWarn}}, nil
		}}
	cat := validators.NewCatalog(maybe)
	for _, tc := range []struct {
		cfg               string
		certain, possible config.Action
	}{
		{"", config.ActionDeny, config.ActionWarn},
		{"rules:\n  maybe: warn\n", config.ActionWarn, config.ActionWarn},
		{"rules:\n  maybe: audit\n", config.ActionAudit, config.ActionAudit},
	} {
		cfg, err := config.Parse([]byte("apiVersion: karpenter-guard.io/v1alpha1\nkind: GuardConfig\n"+tc.cfg), cat.IDs())
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]config.Action{}
		for _, f := range evaluate(t, cat, cfg, facts.None{}, nodeClass).Findings {
			got[f.Message] = f.Action
		}
		if got["certain"] != tc.certain || got["possible"] != tc.possible {
			t.Errorf("config %q: certain %q, possible %q; want %q, %q", tc.cfg, got["certain"], got["possible"], tc.certain, tc.possible)
		}
	}
}
