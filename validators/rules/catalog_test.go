package rules_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/rules"
)

// evaluate evaluates the whole catalog over in (CLI scope) without facts; cfg is a GuardConfig body.
func evaluate(t *testing.T, in, cfg string) validators.Result {
	t.Helper()
	cat := rules.Default()
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

// TestRulesNeedingFactsAreNeverPassedSilently: with no facts, every rule that needs one is listed as
// not evaluated for every object it applies to, naming the missing facts. An off rule is not listed.
func TestRulesNeedingFactsAreNeverPassedSilently(t *testing.T) {
	in := docs(nodeClass("c", baseSpec), nodePool("p", "c", ""), awsAuth("mapRoles: \"\"\n"))
	res := evaluate(t, in, "")
	got := map[string]string{}
	for _, n := range res.NotEvaluated {
		got[n.Rule+"/"+n.Object.Kind] = n.Reason
	}
	cat := rules.Default()
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

var ruleIDRE = regexp.MustCompile(`(?m)^\s+ID:\s+"([a-z0-9-]+)",`)

// TestLayout keeps the promise that a reader finds each rule, its test and its messages from its ID
// alone: rule-id is declared in rule_id.go, its table test is rule_id_test.go, which writes
// testdata/rule-id.golden (with the fixed output for a fixable rule). A second table of a rule is
// rule_id_<aspect>_test.go, writing testdata/rule-id-<aspect>.golden. No file is named helpers.
func TestLayout(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, r := range rules.Default().Rules() {
		ids[r.ID] = true
		base := strings.ReplaceAll(r.ID, "-", "_")
		if src, err := os.ReadFile(base + ".go"); err != nil || !slices.ContainsFunc(ruleIDRE.FindAllStringSubmatch(string(src), -1), func(m []string) bool { return m[1] == r.ID }) {
			t.Errorf("rule %s is not declared in %s.go", r.ID, base)
		}
		if test, err := os.ReadFile(base + "_test.go"); err != nil || !strings.Contains(string(test), `"`+r.ID+`"`) {
			t.Errorf("rule %s has no table test in %s_test.go", r.ID, base)
		}
		golden := filepath.Join("testdata", r.ID+".golden")
		data, err := os.ReadFile(golden)
		if err != nil || len(data) == 0 {
			t.Errorf("rule %s has no golden messages in %s: write its table test", r.ID, golden)
		}
		if r.Fixable && !strings.Contains(string(data), "-- fixed --") {
			t.Errorf("fixable rule %s has no fixed output in %s", r.ID, golden)
		}
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(strings.ToLower(name), "helper") {
			t.Errorf("%s: name a file for what it holds (an analysis, a fixture), not helpers", name)
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ruleIDRE.FindAllStringSubmatch(string(src), -1) {
			if want := strings.ReplaceAll(m[1], "-", "_") + ".go"; name != want {
				t.Errorf("rule %s is declared in %s, not in %s", m[1], name, want)
			}
		}
	}
	goldens, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range goldens {
		name := strings.TrimSuffix(g.Name(), ".golden")
		if ids[name] {
			continue
		}
		// A second table: <id>-<aspect>.golden, written by <id>_<aspect>_test.go.
		found := false
		for id := range ids {
			aspect, ok := strings.CutPrefix(name, id+"-")
			if !ok {
				continue
			}
			test := strings.ReplaceAll(id, "-", "_") + "_" + strings.ReplaceAll(aspect, "-", "_") + "_test.go"
			if src, err := os.ReadFile(test); err == nil && strings.Contains(string(src), `"`+name+`"`) {
				found = true
			}
		}
		if !found {
			t.Errorf("testdata/%s is neither a rule's golden file nor <id>-<aspect>.golden written by <id>_<aspect>_test.go", g.Name())
		}
	}
}
