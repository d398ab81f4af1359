package validators_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/internal/corpus"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

func evaluate(t *testing.T, in, cfg string) validators.Result {
	t.Helper()
	cat := validators.Default()
	c := config.Default()
	if cfg != "" {
		var err error
		if c, err = config.Parse([]byte("apiVersion: karpenter-guard.io/v1alpha1\nkind: GuardConfig\n"+cfg), cat.IDs()); err != nil {
			t.Fatal(err)
		}
	}
	set := readString(t, "in.yaml", in)
	return cat.Evaluate(&validators.Context{Context: context.Background(), Config: c, Facts: facts.None{}, Input: set.Objects, Scope: validators.ScopeCLI}, set.Objects)
}

// TestConfigOverridesActions: the configuration file changes a rule's action or turns it off.
func TestConfigOverridesActions(t *testing.T) {
	in := nodeClass("lab", baseSpec+"metadataOptions:\n  httpTokens: optional\n")
	for _, tc := range []struct {
		cfg  string
		want config.Action
	}{
		{"", config.ActionWarn},
		{"rules:\n  imds-v1-enabled: deny\n", config.ActionDeny},
		{"rules:\n  imds-v1-enabled: audit\n", config.ActionAudit},
		{"rules:\n  imds-v1-enabled: off\n", ""},
	} {
		var got config.Action
		for _, f := range evaluate(t, in, tc.cfg).Findings {
			if f.Rule == "imds-v1-enabled" {
				got = f.Action
			}
		}
		if got != tc.want {
			t.Errorf("config %q: action %q, want %q", tc.cfg, got, tc.want)
		}
	}
}

// TestRulesNeedingFactsAreNeverPassedSilently: with no facts, every rule that needs one is listed as
// not evaluated for every object it applies to, naming the missing facts. An off rule is not listed.
func TestRulesNeedingFactsAreNeverPassedSilently(t *testing.T) {
	in := docs(nodeClass("c", baseSpec), nodePool("p", "c", ""), awsAuth("mapRoles: \"\"\n"))
	res := evaluate(t, in, "")
	got := map[string]string{}
	for _, n := range res.NotEvaluated {
		got[n.Rule+"/"+n.Object.Kind] = n.Reason
	}
	cat := validators.Default()
	for _, r := range cat.Rules() {
		if len(r.Needs) == 0 || r.Scope == validators.ScopeAdmission || (r.Enabled != nil && !r.Enabled(config.Default())) {
			continue
		}
		for _, k := range r.Kinds {
			kind := map[string]string{validators.KindEC2NodeClass: "EC2NodeClass", validators.KindNodePool: "NodePool", validators.KindAWSAuth: "ConfigMap"}[k]
			reason, ok := got[r.ID+"/"+kind]
			if !ok {
				t.Errorf("%s on %s: not listed as not evaluated", r.ID, kind)
				continue
			}
			if !strings.HasPrefix(reason, "no facts: ") || !strings.Contains(reason, string(r.Needs[0])) {
				t.Errorf("%s: reason %q should name the missing facts", r.ID, reason)
			}
		}
	}
	res = evaluate(t, in, "rules:\n  node-role-not-authorized: off\n")
	for _, n := range res.NotEvaluated {
		if n.Rule == "node-role-not-authorized" {
			t.Errorf("a rule turned off is still listed: %+v", n)
		}
	}
}

// TestEveryImplementedRuleHasGoldenMessages keeps the promise that a reader finds each rule's test
// and messages from its ID.
func TestEveryImplementedRuleHasGoldenMessages(t *testing.T) {
	for _, r := range validators.Default().Rules() {
		if r.Check == nil {
			continue
		}
		p := filepath.Join("testdata", r.ID+".golden")
		if data, err := os.ReadFile(p); err != nil || len(data) == 0 {
			t.Errorf("rule %s has no golden messages in %s: write its table test", r.ID, p)
		}
		if r.Fixable {
			data, _ := os.ReadFile(p)
			if !strings.Contains(string(data), "-- fixed --") {
				t.Errorf("fixable rule %s has no fixed output in %s", r.ID, p)
			}
		}
	}
}

// TestNotEvaluatedReasonFollowsTheProvider: the catalog reuses the reason it composed for a rule's
// unknown facts only while the provider gives the same reasons, so one catalog shared by many
// evaluations (the webhook's) never reports a stale reason.
func TestNotEvaluatedReasonFollowsTheProvider(t *testing.T) {
	cat := validators.Default()
	set := readString(t, "in.yaml", nodeClass("c", baseSpec))
	noRoles := corpus.Facts(10, 4, 4)
	noRoles.Roles = nil
	reason := func(p facts.Provider) string {
		res := cat.Evaluate(&validators.Context{Context: context.Background(), Facts: p, Input: set.Objects, Scope: validators.ScopeCLI}, set.Objects)
		for _, n := range res.NotEvaluated {
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
