package rules_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/internal/fakeaws"
	"github.com/karpenter-guard/karpenter-guard/internal/livetest"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/rules"
)

// simulatedBy answers from a snapshot, except the simulations, which another provider answers.
type simulatedBy struct {
	facts.Provider
	sim facts.Provider
}

func (p simulatedBy) Known(ctx context.Context, f facts.Fact) error {
	if f == facts.Simulations {
		return p.sim.Known(ctx, f)
	}
	return p.Provider.Known(ctx, f)
}

func (p simulatedBy) Simulate(ctx context.Context, row facts.SimulationRow) ([]facts.Simulation, error) {
	return p.sim.Simulate(ctx, row)
}

// TestControllerRulesUnderKarpentersPolicy asks the rules' questions of the policy simulator of the
// AWS fake (through the live provider), whose controller role holds the controller policy of
// Karpenter's getting-started guide for prod-eks as users install it (an older revision without
// iam:ListInstanceProfiles and ec2:DescribeInstanceStatus): the contexts the rules send must satisfy
// its conditions, so every launch question is allowed, for a pool that admits spot, one that does not,
// and a class no pool references, and only those two missing actions are denied. A class with a node
// role the policy does not name cannot pass it.
func TestControllerRulesUnderKarpentersPolicy(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "internal", "fakeaws", "testdata", "karpenter-controller.policies.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	policies, err := fakeaws.LoadPolicies(data)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := facts.DecodeSnapshotFile([]byte(controllerFacts(nil)))
	if err != nil {
		t.Fatal(err)
	}
	srv := fakeaws.New(cf, fakeaws.WithPolicies(policies))
	p := simulatedBy{Provider: facts.NewSnapshot(cf), sim: livetest.NewProvider(t, srv.Start(t), cf, livetest.Options{})}

	in := docs(
		nodeClass("default", eksSpec+"tags:\n  team: platform\n"),
		nodePool("on-demand", "default", ""),
		capacityPool("spot", ""), // no capacity-type requirement: spot
		nodeClass("lonely", eksSpec),
		nodeClass("team", withRole("role: "+teamRole+"\n")),
	)
	cfg, err := config.Parse([]byte(queueConfig), rules.Default().IDs())
	if err != nil {
		t.Fatal(err)
	}
	set := readString(t, "in.yaml", in)
	res := rules.Default().Evaluate(&validators.Context{Context: context.Background(), Config: cfg, Facts: p, Input: set.Objects, Scope: validators.ScopeCLI}, set.Objects)

	var got []string
	for _, f := range res.Findings {
		if strings.HasPrefix(f.Rule, "controller-") {
			got = append(got, f.Object.Name+" "+string(f.Action)+" "+f.Message[strings.Index(f.Message, " may not call ")+1:strings.Index(f.Message, "):")+1])
		}
	}
	for _, n := range res.NotEvaluated {
		if strings.HasPrefix(n.Rule, "controller-") {
			t.Errorf("%s not evaluated on %s: %s", n.Rule, n.Object.Name, n.Reason)
		}
	}
	want := []string{
		"default warn may not call iam:ListInstanceProfiles (D1)",
		"default warn may not call ec2:DescribeInstanceStatus (D4)",
		"lonely warn may not call iam:ListInstanceProfiles (D1)",
		"lonely warn may not call ec2:DescribeInstanceStatus (D4)",
		"team deny may not call iam:PassRole on " + teamRoleARN + " (L1)",
		"team warn may not call iam:ListInstanceProfiles (D1)",
		"team warn may not call ec2:DescribeInstanceStatus (D4)",
	}
	slices.Sort(got)
	slices.Sort(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings under Karpenter's policy:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
