package rules_test

import (
	"context"
	"strings"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/rules"
)

// TestNodePoolRulesOnNodeClassUpdate: on an EC2NodeClass UPDATE the webhook judges the NodePools that
// use the class against its new spec and reports on the class, naming them; until the cluster's
// NodePools are known (the watch has not synced) the NodePool rules are not evaluated on the class.
// Outside admission a class is never judged for its pools: the CLI judges the pools themselves.
func TestNodePoolRulesOnNodeClassUpdate(t *testing.T) {
	cat := rules.Default()
	oldClass := parseOne(t, "", nodeClass("default", eksSpec))
	// The change narrows the subnets to us-east-1b, while the pool requires us-east-1a.
	newClass := parseOne(t, "", nodeClass("default", subnetSel("  - id: "+privateB+"\n")))
	pool := parseOne(t, "", poolWith("zone-a", "default", "- key: topology.kubernetes.io/zone\n  operator: In\n  values: [us-east-1a]\n"))
	other := parseOne(t, "", poolWith("any-zone", "default", ""))
	cf, err := facts.DecodeSnapshotFile([]byte(netFacts()))
	if err != nil {
		t.Fatal(err)
	}
	evaluate := func(scope validators.Scope, synced error) validators.Result {
		p := facts.WithClusterNodeClasses(facts.NewSnapshot(cf), func(context.Context) error { return synced })
		return cat.Evaluate(&validators.Context{Context: context.Background(), Config: config.Default(), Facts: p,
			Input: []*objects.Object{oldClass, pool, other}, Scope: scope, Operation: validators.OperationUpdate, Old: oldClass,
			FindNodePools: func(string) []*objects.Object { return []*objects.Object{pool, other} }}, []*objects.Object{newClass})
	}
	res := evaluate(validators.ScopeAdmission, nil)
	var got []validators.Finding
	for _, f := range res.Findings {
		if f.Rule == "nodepool-zones-without-subnets" {
			got = append(got, f)
		}
	}
	if len(got) != 1 || got[0].Object.Kind != "EC2NodeClass" || !strings.Contains(got[0].Message, "with this change NodePool zone-a cannot launch") || got[0].Action != config.ActionDeny {
		t.Errorf("findings on the class: %s", render(got))
	}
	// A pool that could not launch with the class as it was is not the change's doing: the edit passes.
	broken := parseOne(t, "", poolWith("zone-c", "default", "- key: topology.kubernetes.io/zone\n  operator: In\n  values: [us-east-1c]\n"))
	p := facts.WithClusterNodeClasses(facts.NewSnapshot(cf), func(context.Context) error { return nil })
	res = cat.Evaluate(&validators.Context{Context: context.Background(), Config: config.Default(), Facts: p,
		Input: []*objects.Object{oldClass, broken}, Scope: validators.ScopeAdmission, Operation: validators.OperationUpdate, Old: oldClass,
		FindNodePools: func(string) []*objects.Object { return []*objects.Object{broken} }}, []*objects.Object{newClass})
	for _, f := range res.Findings {
		if f.Rule == "nodepool-zones-without-subnets" {
			t.Errorf("a pool broken before the change refuses the change: %s", render([]validators.Finding{f}))
		}
	}
	res = evaluate(validators.ScopeAdmission, facts.Unknown(facts.ClusterNodePools, "the watch has not synced yet"))
	found := false
	for _, n := range res.NotEvaluated {
		found = found || (n.Rule == "nodepool-zones-without-subnets" && strings.Contains(n.Reason, "the watch has not synced yet"))
	}
	if !found {
		t.Errorf("with the NodePools unknown the rule is not reported as not evaluated: %+v", res.NotEvaluated)
	}
	res = evaluate(validators.ScopeCLI, nil)
	for _, f := range res.Findings {
		if strings.HasPrefix(f.Rule, "nodepool-") {
			t.Errorf("outside admission a class was judged for its pools: %s", render([]validators.Finding{f}))
		}
	}
}
