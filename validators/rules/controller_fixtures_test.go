package rules_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/rules"
)

// This file holds the fixtures of the controller-permission rules: the prod-eks snapshot with the
// controller's role, and a simulations section that answers every question the rules ask about the
// input's EC2NodeClasses, enumerated by the rules' own row builder, all allowed but the answers a case
// changes. Writing the entries by hand stays the job of the cases in the snapshot format itself, which
// check that the rules ask what the table says.

const (
	controllerRoleARN = "arn:aws:iam::111122223333:role/KarpenterController-prod-eks"
	// queueConfig configures Karpenter's interruption queue.
	queueConfig = "apiVersion: karpenter-guard.io/v1alpha1\nkind: GuardConfig\nkarpenter:\n  interruptionQueue: prod-eks\n"
)

// controllerSection renders the karpenterController section, with extra fields ("targetRoleArn: …");
// the source is irsa unless one of them sets it.
func controllerSection(extra ...string) string {
	s := "karpenterController:\n  serviceAccount: kube-system/karpenter\n  roleArn: " + controllerRoleARN + "\n"
	if !slices.ContainsFunc(extra, func(e string) bool { return strings.HasPrefix(e, "source:") }) {
		s += "  source: irsa\n"
	}
	for _, e := range extra {
		s += "  " + e + "\n"
	}
	return s
}

// answer changes the simulator's answer to the questions of one action on the resources whose ARN ends
// in resource ("" for every resource), optionally only in the context of one NodePool.
type answer struct {
	action, resource string
	// decision is implicitDeny or explicitDeny; "" leaves the questions out of the snapshot (unknown).
	decision string
	missing  []string
	// pool, when set, limits the change to questions tagged karpenter.sh/nodepool = pool ("-" for "").
	pool string
}

// denied is an implicit denial of action on resource.
func denied(action, resource string) answer {
	return answer{action: action, resource: resource, decision: facts.DecisionImplicitDeny}
}

// unanswered leaves the questions of action on resource out of the snapshot.
func unanswered(action, resource string) answer { return answer{action: action, resource: resource} }

func (a answer) matches(q facts.SimulationQuestion) bool {
	if !strings.EqualFold(q.Action, a.action) || !strings.HasSuffix(q.Resource, a.resource) {
		return false
	}
	if a.pool == "" {
		return true
	}
	want := a.pool
	if want == "-" {
		want = ""
	}
	for _, k := range []string{"aws:RequestTag/karpenter.sh/nodepool", "aws:ResourceTag/karpenter.sh/nodepool"} {
		if v, ok := q.Context[k]; ok {
			return len(v) == 1 && v[0] == want
		}
	}
	return false
}

// simulated returns base (a snapshot that knows the controller's role) with a simulations section
// answering every question the controller rules ask about the EC2NodeClasses of in, evaluated with the
// GuardConfig cfg ("" for the default): allowed, except as the answers say. An answer that changes no
// question fails the test: the case would not test what it says.
func simulated(t *testing.T, in, cfg, base string, answers ...answer) string {
	t.Helper()
	c := config.Default()
	if cfg != "" {
		var err error
		if c, err = config.Parse([]byte(cfg), rules.Default().IDs()); err != nil {
			t.Fatalf("config: %v", err)
		}
	}
	cf, err := facts.DecodeSnapshotFile([]byte(base))
	if err != nil {
		t.Fatalf("facts: %v", err)
	}
	set := readString(t, "fixture.yaml", in)
	ctx := &validators.Context{Context: context.Background(), Config: c, Facts: facts.NewSnapshot(cf), Input: set.Objects, Scope: validators.ScopeCLI}
	used := make([]bool, len(answers))
	seen := map[string]bool{}
	var b strings.Builder
	b.WriteString("simulations:\n")
	for _, o := range set.Objects {
		if o.NodeClass == nil {
			continue
		}
		rows, err := rules.ControllerRows(ctx, o)
		if err != nil {
			t.Fatalf("rows of %s: %v", o.Name, err)
		}
		for _, r := range rows {
			for _, q := range questionsOf(r) {
				if seen[q.Key()] {
					continue
				}
				seen[q.Key()] = true
				sim := q.Answer(facts.DecisionAllowed, nil)
				keep := true
				for i, a := range answers {
					if a.matches(q) {
						used[i] = true
						sim.Decision, sim.MissingContextValues, keep = a.decision, a.missing, a.decision != ""
					}
				}
				if keep {
					entry, err := json.Marshal(sim)
					if err != nil {
						t.Fatal(err)
					}
					b.WriteString("  - " + string(entry) + "\n")
				}
			}
		}
	}
	for i, a := range answers {
		if !used[i] {
			t.Fatalf("answer %+v matches no question", a)
		}
	}
	return base + b.String()
}

// controllerFacts is the prod-eks snapshot with the controller's role (extra fields as for
// controllerSection).
func controllerFacts(opts []factsOpt, extra ...string) string {
	return clusterFacts(opts...) + controllerSection(extra...)
}

// questionsOf returns the questions of every call of a row.
func questionsOf(r rules.ControllerRow) []facts.SimulationQuestion {
	var qs []facts.SimulationQuestion
	for _, call := range r.Calls {
		qs = append(qs, call.Questions()...)
	}
	return qs
}
