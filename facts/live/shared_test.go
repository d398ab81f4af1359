package live_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/internal/fakeaws"
	"github.com/karpenter-guard/karpenter-guard/internal/livetest"
	"github.com/karpenter-guard/karpenter-guard/manifest"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/rules"
)

// exampleWorld is an example cluster whose IAM policies the AWS fake evaluates, and its manifests.
type exampleWorld struct {
	name     string
	cf       *facts.ClusterFacts
	policies fakeaws.Policies
	sources  []manifest.Source
}

// loadExample reads examples/<dir> (its snapshot without the simulations, which the policies answer
// instead) and e2e/testdata/policies/<name>.yaml, rewritten by edit.
func loadExample(t testing.TB, name, dir string, edit func(string) string) exampleWorld {
	t.Helper()
	root := filepath.Join("..", "..")
	data, err := os.ReadFile(filepath.Join(root, dir, "cluster-facts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cf, err := facts.DecodeSnapshotFile(data)
	if err != nil {
		t.Fatal(err)
	}
	cf.Simulations = nil
	raw, err := os.ReadFile(filepath.Join(root, "e2e", "testdata", "policies", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	policies, err := fakeaws.LoadPolicies([]byte(edit(string(raw))))
	if err != nil {
		t.Fatal(err)
	}
	w := exampleWorld{name: name, cf: cf, policies: policies}
	entries, err := os.ReadDir(filepath.Join(root, dir))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if n := e.Name(); strings.HasSuffix(n, ".yaml") && n != "cluster-facts.yaml" {
			src, err := os.ReadFile(filepath.Join(root, dir, n))
			if err != nil {
				t.Fatal(err)
			}
			w.sources = append(w.sources, manifest.Source{Path: n, Data: src})
		}
	}
	return w
}

// nameRE finds the names of EC2NodeClasses and NodePools (metadata.name, nodeClassRef.name) and the
// values of tags to vary in copies.
var nameRE = regexp.MustCompile(`(?m)^(\s*name:\s*"?)([a-z0-9.-]+)("?\s*)$`)

// withCopies adds to the world's manifests renamed copies of its EC2NodeClasses and NodePools (the
// pool's reference to its class renamed alike), under the names names gives: each copy is a distinct
// class and pool whose launches carry their own names in their tags.
func (w exampleWorld) withCopies(names []string) *manifest.Set {
	set := &manifest.Set{}
	for _, s := range w.sources {
		set.Add(s)
		text := string(s.Data)
		if !strings.Contains(text, "kind: EC2NodeClass") && !strings.Contains(text, "kind: NodePool") {
			continue
		}
		for i, n := range names {
			copied := nameRE.ReplaceAllString(text, "${1}${2}-"+n+"${3}")
			set.Add(manifest.Source{Path: fmt.Sprintf("copy-%d-%s", i, s.Path), Data: []byte(copied)})
		}
	}
	return set
}

// evaluation is what a user sees of a run, and what the simulator was asked and answered.
type evaluation struct {
	verdicts    []string
	simulations []string
	calls       int
}

// evaluate runs every rule over set through a live provider against the fake, recording every
// simulation; exact keeps the role's policies from being read (no row is then shared).
func (w exampleWorld) evaluate(t *testing.T, set *manifest.Set, exact bool) evaluation {
	t.Helper()
	srv := fakeaws.New(w.cf, fakeaws.WithPolicies(w.policies))
	if exact {
		srv.Inject("iam:ListRolePolicies", fakeaws.Fault{AccessDenied: true})
	}
	rec := facts.NewRecorder(livetest.NewProvider(t, srv.Start(t), w.cf, livetest.Options{}))
	var p facts.Provider = rec
	if auth, malformed, ok := validators.InputAWSAuth(set.Objects); ok {
		p = facts.WithInputAWSAuth(p, auth, malformed)
	}
	c := &validators.Context{Context: context.Background(), Config: config.Default(), Facts: p, Input: set.Objects, Scope: validators.ScopeCLI}
	res := rules.Default().Evaluate(c, set.Objects)
	var e evaluation
	for _, f := range res.Findings {
		e.verdicts = append(e.verdicts, fmt.Sprintf("%s %s %s %s: %s", f.Action, f.Rule, f.Object, f.Field, f.Message))
	}
	for _, n := range res.NotEvaluated {
		e.verdicts = append(e.verdicts, fmt.Sprintf("not evaluated %s %s: %s", n.Rule, n.Object, n.Reason))
	}
	if sims := rec.Snapshot().Simulations; sims != nil {
		for _, s := range *sims {
			e.simulations = append(e.simulations, fmt.Sprintf("%s %s %s %v: %s %v", s.Principal, s.Action, s.Resource, s.Context, s.Decision, s.MissingContextValues))
		}
	}
	slices.Sort(e.verdicts)
	slices.Sort(e.simulations)
	e.calls = srv.Calls("iam:SimulatePrincipalPolicy")
	return e
}

// TestSharedSimulationsAnswerAsWritten: sharing a simulation between rows whose context values the
// policies do not tell apart changes no answer and no verdict. Each example cluster with IAM policies,
// with renamed copies of its classes and pools, is judged twice: with the roles' policies readable
// (rows shared) and unreadable (every row simulated as written); every simulation's answer, every
// finding and every rule not evaluated must be the same. One world's controller policy tells NodePools
// apart by name (team-a-* may launch, *-blocked may not), so that shared rows must follow the names.
func TestSharedSimulationsAnswerAsWritten(t *testing.T) {
	same := func(s string) string { return s }
	byName := func(s string) string {
		s = strings.ReplaceAll(s, `"aws:RequestTag/karpenter.sh/nodepool": "*"`, `"aws:RequestTag/karpenter.sh/nodepool": ["team-a-*", "production-team-a-*"]`)
		return strings.Replace(s, `"Statement": [`, `"Statement": [
            {"Effect": "Deny", "Action": "ec2:*", "Resource": "*", "Condition": {"StringLike": {"aws:RequestTag/karpenter.sh/nodepool": "*-blocked"}}},`, 1)
	}
	copies := []string{"team-a-1", "team-a-2", "team-b-1", "team-a-blocked", "TEAM-A-3", "team-c-1"}
	worlds := []exampleWorld{loadExample(t, "production", "examples/production", same), loadExample(t, "production", "examples/production", byName)}
	worlds[1].name = "production, pools told apart by name"
	files, err := filepath.Glob(filepath.Join("..", "..", "e2e", "testdata", "policies", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if name := strings.TrimSuffix(filepath.Base(f), ".yaml"); name != "production" {
			worlds = append(worlds, loadExample(t, name, filepath.Join("examples", "clusters", name), same))
		}
	}
	for _, w := range worlds {
		t.Run(w.name, func(t *testing.T) {
			set := w.withCopies(copies)
			shared, exact := w.evaluate(t, set, false), w.evaluate(t, set, true)
			if len(exact.simulations) == 0 {
				t.Fatal("no simulation asked")
			}
			if d := diffLines(exact.simulations, shared.simulations); d != "" {
				t.Errorf("simulations answered otherwise when shared (- as written, + shared):\n%s", d)
			}
			if d := diffLines(exact.verdicts, shared.verdicts); d != "" {
				t.Errorf("verdicts differ when simulations are shared (- as written, + shared):\n%s", d)
			}
			if shared.calls >= exact.calls {
				t.Errorf("%d SimulatePrincipalPolicy calls shared, %d as written: nothing was shared", shared.calls, exact.calls)
			}
			t.Logf("%d objects: %d simulations, %d calls shared, %d as written", len(set.Objects), len(exact.simulations), shared.calls, exact.calls)
		})
	}
}

// diffLines lists the lines only in want (-) or only in got (+).
func diffLines(want, got []string) string {
	var b strings.Builder
	for _, l := range want {
		if !slices.Contains(got, l) {
			b.WriteString("- " + l + "\n")
		}
	}
	for _, l := range got {
		if !slices.Contains(want, l) {
			b.WriteString("+ " + l + "\n")
		}
	}
	return b.String()
}
