package rules_test

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/fix"
	"github.com/karpenter-guard/karpenter-guard/internal/golden"
	"github.com/karpenter-guard/karpenter-guard/internal/livetest"
	"github.com/karpenter-guard/karpenter-guard/manifest"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/rules"
)

var update = flag.Bool("update", false, "rewrite golden files and the README rule table")

// ruleCase is one input for one rule: the manifests (one file, any number of documents), an optional
// GuardConfig, and how many findings of the rule it must produce.
type ruleCase struct {
	name string
	in   string
	cfg  string
	// facts is a ClusterFacts snapshot; empty means no facts. An aws-auth ConfigMap in `in` fills its
	// awsAuth as the CLI does.
	facts string
	fires int
	// notEvaluated, when set, expects the rule to be reported as not evaluated with a reason containing it.
	notEvaluated string
	// snapshotOnly, when set, says why the live provider cannot see the case's world (a simulation
	// question the snapshot leaves unanswered, which IAM always answers; a fact the live provider always
	// knows): the case then runs on the snapshot alone.
	snapshotOnly string
}

// testRule runs the cases of one rule against the whole catalog (so rules interact as they do for
// users) and checks, for each case: the number of findings of the rule; for firing cases, the message,
// fix and field in testdata/<rule>.golden; for fixable findings, the fixed file (also in the golden),
// that the rule no longer fires on it, and that a second fix changes nothing.
func testRule(t *testing.T, ruleID string, cases []ruleCase) {
	t.Helper()
	testRuleNamed(t, ruleID, ruleID, cases)
}

// testRuleNamed is testRule with its golden file named testdata/<goldenName>.golden, for a second table of
// the same rule (the rule's own golden keeps its first table).
func testRuleNamed(t *testing.T, ruleID, goldenName string, cases []ruleCase) {
	t.Helper()
	cat := rules.Default()
	rule := cat.Rule(ruleID)
	if rule == nil {
		t.Fatalf("rule %q is not in the catalog", ruleID)
	}
	var out strings.Builder
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.Default()
			if tc.cfg != "" {
				c, err := config.Parse([]byte(tc.cfg), cat.IDs())
				if err != nil {
					t.Fatalf("config: %v", err)
				}
				cfg = c
			}
			file := tc.name + ".yaml"
			set := readString(t, file, tc.in)
			var provider facts.Provider = facts.None{}
			if tc.facts != "" {
				cf, err := facts.DecodeSnapshotFile([]byte(tc.facts))
				if err != nil {
					t.Fatalf("facts: %v", err)
				}
				var snap facts.Provider = facts.NewSnapshot(cf)
				data, malformed, inputAWSAuth := validators.InputAWSAuth(set.Objects)
				if inputAWSAuth {
					snap = facts.WithInputAWSAuth(snap, data, malformed)
				}
				provider = snap
				// Every case whose world the live provider can see runs through it too.
				if livetest.Expressible(cf) == nil && tc.snapshotOnly == "" {
					var lp facts.Provider = livetest.Start(t, cf, livetest.Options{}).Provider
					if inputAWSAuth {
						lp = facts.WithInputAWSAuth(lp, data, malformed)
					}
					requireSameVerdicts(t, cat, cfg, set, snap, lp)
				}
			}
			eval := evaluator(cat, cfg, provider, ruleID)
			res := eval(set)
			got := res.Findings
			if tc.notEvaluated != "" {
				found := false
				for _, n := range res.NotEvaluated {
					if n.Rule == ruleID && strings.Contains(n.Reason, tc.notEvaluated) {
						found = true
					}
				}
				if !found {
					t.Errorf("%s not reported as not evaluated (%q): %+v", ruleID, tc.notEvaluated, res.NotEvaluated)
				}
			} else {
				for _, n := range res.NotEvaluated {
					if n.Rule == ruleID {
						t.Errorf("%s unexpectedly not evaluated: %s", ruleID, n.Reason)
					}
				}
			}
			if len(got) != tc.fires {
				t.Fatalf("%s fired %d times, want %d:\n%s", ruleID, len(got), tc.fires, render(got))
			}
			if tc.fires == 0 {
				return
			}
			fmt.Fprintf(&out, "## %s\n%s", tc.name, render(got))
			fixable := false
			for _, f := range got {
				if f.Fixable != (len(f.Edits) > 0) {
					t.Errorf("finding %s: Fixable=%v but %d edits", f.Field, f.Fixable, len(f.Edits))
				}
				if f.Fixable && !rule.Fixable {
					t.Errorf("rule %s is not declared fixable but its finding carries edits", ruleID)
				}
				fixable = fixable || f.Fixable
			}
			if !fixable {
				return
			}
			fixed := fix.Apply(set, eval)
			for _, p := range fixed.Problems {
				t.Errorf("fix problem: %s", p)
			}
			text, ok := fixed.Files[file]
			if !ok {
				t.Fatalf("fixable findings but --fix changed nothing")
			}
			fmt.Fprintf(&out, "-- fixed --\n%s", text)
			after := readString(t, file, string(text))
			for _, f := range eval(after).Findings {
				if f.Fixable {
					t.Errorf("after --fix the rule still finds a fixable problem: %s", render([]validators.Finding{f}))
				}
			}
			if again := fix.Apply(after, eval); len(again.Files) > 0 {
				t.Errorf("second --fix changed the file again (not idempotent):\n%s", again.Files[file])
			}
			requireNoNewSchemaErrors(t, cat, cfg, set, after)
		})
	}
	golden.Compare(t, filepath.Join("testdata", goldenName+".golden"), out.String(), *update)
}

// requireSameVerdicts evaluates set with the snapshot provider and with the live provider talking to
// the AWS fake that serves the same snapshot, and demands the same findings and the same rules not
// evaluated (their reasons differ: "not in the facts snapshot" against "AWS denied …"). This keeps
// the two providers honest: the live provider's EC2 filters, pagination and error handling must give
// what the snapshot's matching gives.
func requireSameVerdicts(t *testing.T, cat *validators.Catalog, cfg *config.Config, set *manifest.Set, snap, lp facts.Provider) {
	t.Helper()
	verdicts := func(p facts.Provider) string {
		res := cat.Evaluate(&validators.Context{Context: context.Background(), Config: cfg, Facts: p, Input: set.Objects, OtherNodeClasses: set.OtherNodeClasses, Scope: validators.ScopeCLI}, set.Objects)
		var b strings.Builder
		b.WriteString(render(res.Findings))
		for _, n := range res.NotEvaluated {
			fmt.Fprintf(&b, "not evaluated: %s on %s %s\n", n.Rule, n.Object.Kind, n.Object.Name)
		}
		return b.String()
	}
	if s, l := verdicts(snap), verdicts(lp); s != l {
		t.Errorf("the live provider (through the AWS fake) and the snapshot disagree:\n--- snapshot\n%s--- live\n%s", s, l)
	}
}

func readString(t *testing.T, file, in string) *manifest.Set {
	t.Helper()
	set := &manifest.Set{}
	set.Add(manifest.Source{Path: file, Data: []byte(in)})
	if len(set.Errors) > 0 {
		t.Fatalf("input errors: %v", set.Errors)
	}
	return set
}

// evaluator evaluates a set with the given facts, in the CLI's scope, keeping only one rule's findings.
func evaluator(cat *validators.Catalog, cfg *config.Config, p facts.Provider, ruleID string) fix.Evaluator {
	return func(s *manifest.Set) validators.Result {
		res := cat.Evaluate(&validators.Context{Context: context.Background(), Config: cfg, Facts: p, Input: s.Objects, OtherNodeClasses: s.OtherNodeClasses, Scope: validators.ScopeCLI}, s.Objects)
		var keep []validators.Finding
		for _, f := range res.Findings {
			if f.Rule == ruleID {
				keep = append(keep, f)
			}
		}
		res.Findings = keep
		return res
	}
}

// requireNoNewSchemaErrors fails when the fixed set holds an object the API server would refuse for a
// reason the input did not have: --fix never writes what Karpenter's CRDs refuse.
func requireNoNewSchemaErrors(t *testing.T, cat *validators.Catalog, cfg *config.Config, before, after *manifest.Set) {
	t.Helper()
	schema := evaluator(cat, cfg, facts.None{}, "karpenter-crd-invalid")
	had := map[string]bool{}
	for _, f := range schema(before).Findings {
		had[f.Object.Kind+"/"+f.Object.Name+" "+f.Message] = true
	}
	for _, f := range schema(after).Findings {
		if !had[f.Object.Kind+"/"+f.Object.Name+" "+f.Message] {
			t.Errorf("--fix wrote what the API server refuses: %s", render([]validators.Finding{f}))
		}
	}
}

func render(fs []validators.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "%s:%d %s %s [%s]\n  message: %s\n  fix: %s\n", f.Object.Kind, f.Line, f.Action, f.Field, f.Object.Name, f.Message, f.Fix)
	}
	return b.String()
}
