package rules

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/manifest"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

// simulationLog is a questionLog that also writes down the controller's role and each simulation call
// by its row's key, so that a call asked ahead must be the very call the rules make, not only ask the
// same questions.
type simulationLog struct{ *questionLog }

func (l simulationLog) KarpenterController(ctx context.Context) (*facts.ControllerRole, error) {
	l.note("KarpenterController")
	return l.Provider.KarpenterController(ctx)
}

func (l simulationLog) Simulate(ctx context.Context, row facts.SimulationRow) ([]facts.Simulation, error) {
	l.note("Simulate " + row.Key())
	return l.Provider.Simulate(ctx, row)
}

// TestAskAheadMirrorsTheControllerRules is TestAskAheadMirrorsTheRules for the controller-permission
// rules, in worlds where the controller's role is known: the calls simulated ahead are exactly those
// the rules make, when the rows depend on the NodePools, on unknown facts, on a cross-account role, on
// the interruption queue and on which of the two rules runs.
func TestAskAheadMirrorsTheControllerRules(t *testing.T) {
	path := filepath.Join("..", "..", "examples", "production")
	set := (&manifest.Reader{MaxFileSize: manifest.DefaultMaxFileSize}).Read(context.Background(), []string{path})
	if len(set.Errors) > 0 {
		t.Fatal(set.Errors)
	}
	extra := readObjects(t, `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: spot}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: production}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: by-profile}
spec:
  instanceProfile: KarpenterNodeInstanceProfile-prod-eks
  amiSelectorTerms: [{alias: al2023@latest}, {ssmParameter: /platform/ami/golden}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: prod-eks}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: prod-eks}}]
  tags: {team: platform}
`)
	objs := slices.Concat(set.Objects, extra)
	base := decodeFacts(t, readFile(t, filepath.Join(path, "cluster-facts.yaml")))
	base.KarpenterController = &facts.ControllerRole{ServiceAccount: "kube-system/karpenter", RoleARN: "arn:aws:iam::111122223333:role/KarpenterController-prod-eks", Source: facts.CredentialsIRSA}
	// Every row of every class answered, all allowed but PassRole: the rules run to the end.
	var sims []facts.Simulation
	ctx := &validators.Context{Context: context.Background(), Config: config.Default(), Facts: facts.NewSnapshot(base), Input: objs}
	for _, o := range objs {
		if o.NodeClass == nil {
			continue
		}
		for _, r := range buildControllerRows(ctx, o).rows {
			for _, call := range r.calls() {
				for _, q := range call.Questions() {
					d := facts.DecisionAllowed
					if q.Action == "iam:PassRole" {
						d = facts.DecisionImplicitDeny
					}
					sims = append(sims, q.Answer(d, nil))
				}
			}
		}
	}
	if len(sims) == 0 {
		t.Fatal("no simulation question")
	}
	world := func(change func(cf *facts.ClusterFacts)) *facts.ClusterFacts {
		cf := *base
		kc := *base.KarpenterController
		cf.KarpenterController = &kc
		s := slices.Clone(sims)
		cf.Simulations = &s
		change(&cf)
		return &cf
	}
	queue := config.Default()
	queue.Karpenter.InterruptionQueue = "prod-eks"
	runtimeOnly := config.Default()
	runtimeOnly.Rules = map[string]config.Action{controllerLaunchPermissions.ID: config.ActionOff}

	for _, w := range []struct {
		name string
		cf   *facts.ClusterFacts
		cfg  *config.Config
		// simulates is whether the rules simulate anything in that world.
		simulates bool
	}{
		{"answered", world(func(*facts.ClusterFacts) {}), config.Default(), true},
		{"interruption queue", world(func(*facts.ClusterFacts) {}), queue, true},
		{"runtime rule only", world(func(*facts.ClusterFacts) {}), runtimeOnly, true},
		{"subnets unknown", world(func(cf *facts.ClusterFacts) { cf.Subnets = nil }), config.Default(), true},
		{"security groups unknown", world(func(cf *facts.ClusterFacts) { cf.SecurityGroups = nil }), config.Default(), true},
		{"instance profiles unknown", world(func(cf *facts.ClusterFacts) { cf.InstanceProfiles = nil }), config.Default(), true},
		{"cross-account role", world(func(cf *facts.ClusterFacts) {
			cf.KarpenterController.TargetRoleARN = "arn:aws:iam::444455556666:role/Karpenter"
		}), config.Default(), false},
		{"no simulations", world(func(cf *facts.ClusterFacts) { cf.Simulations = nil }), config.Default(), false},
		{"no cluster", world(func(cf *facts.ClusterFacts) { cf.Cluster = nil }), config.Default(), false},
	} {
		t.Run(w.name, func(t *testing.T) {
			mk := func(p facts.Provider) *validators.Context {
				return &validators.Context{Context: context.Background(), Config: w.cfg, Facts: p, Input: objs, Scope: validators.ScopeCLI}
			}
			rules := simulationLog{newQuestionLog(facts.NewSnapshot(w.cf), false)}
			Default().Evaluate(mk(rules), objs)
			ahead := simulationLog{newQuestionLog(facts.NewSnapshot(w.cf), true)}
			askAhead(Default(), mk(ahead), objs)

			r, a := rules.questions(), ahead.questions()
			for _, q := range a {
				if !slices.Contains(r, q) {
					t.Errorf("asked ahead, never by a rule: %.200q", q)
				}
			}
			simulated := 0
			for _, q := range r {
				if !slices.Contains(a, q) {
					t.Errorf("asked by a rule, not foreseen: %.200q", q)
				}
				// The node-role rules simulate too (the example knows aws-node): count the controller's rows.
				if strings.HasPrefix(q, "Simulate ") && strings.Contains(q, base.KarpenterController.RoleARN) {
					simulated++
				}
			}
			if got := simulated > 0; got != w.simulates {
				t.Errorf("the rules simulated %d rows of the controller; want some: %v", simulated, w.simulates)
			}
		})
	}
}
