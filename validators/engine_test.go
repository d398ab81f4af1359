package validators_test

import (
	"context"
	"errors"
	"strings"
	"testing"

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

// remote answers nothing at hand and everything otherwise, and asks to be asked ahead.
type remote struct{ facts.None }

func (remote) AskAhead() bool { return true }

func (remote) Known(ctx context.Context, f facts.Fact) error {
	if facts.OnlyAtHand(ctx) {
		return facts.NotAtHand(ctx, f)
	}
	return nil
}

// TestAskAhead: with a provider whose answers are not at hand, Evaluate calls the catalog's
// AskAheadFunc once before running the rules on the answers; a Subset of the catalog asks ahead as
// the catalog does.
func TestAskAhead(t *testing.T) {
	r := &validators.Rule{ID: "needs-roles", Kinds: []string{validators.KindEC2NodeClass}, DefaultAction: config.ActionDeny,
		Summary: "test", Doc: "test", Needs: []facts.Fact{facts.Roles},
		Check: func(*validators.Context, *objects.Object) ([]validators.Finding, error) { return nil, nil }}
	asked := 0
	cat := validators.NewCatalog(r).WithAskAhead(func(of *validators.Catalog, c *validators.Context, objs []*objects.Object) {
		if got := of.RulesIn(c, validators.KindEC2NodeClass); len(got) != 1 || got[0] != r || len(objs) != 1 {
			t.Errorf("asked ahead for rules %v and %d objects, want needs-roles and 1", got, len(objs))
		}
		asked++
	})
	for _, c := range []*validators.Catalog{cat, cat.Subset(r)} {
		asked = 0
		if res := evaluate(t, c, nil, remote{}, nodeClass); len(res.NotEvaluated) > 0 {
			t.Errorf("not evaluated: %+v", res.NotEvaluated)
		}
		if asked != 1 {
			t.Errorf("asked ahead %d times, want once", asked)
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
