package rules_test

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/internal/livetest"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/rules"
)

// evalFacts evaluates the whole catalog over in (CLI scope) with a ClusterFacts snapshot; an aws-auth
// ConfigMap in the input fills a snapshot without awsAuth, as in the CLI. cfg is a GuardConfig body.
func evalFacts(t *testing.T, in, snapshot, cfg string) validators.Result {
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
	cf, err := facts.DecodeSnapshotFile([]byte(snapshot))
	if err != nil {
		t.Fatalf("facts: %v\n%s", err, snapshot)
	}
	var snap facts.Provider = facts.NewSnapshot(cf)
	var lp facts.Provider
	if livetest.Expressible(cf) == nil {
		lp = livetest.Start(t, cf, livetest.Options{}).Provider
	}
	if data, malformed, ok := validators.InputAWSAuth(set.Objects); ok {
		snap = facts.WithInputAWSAuth(snap, data, malformed)
		if lp != nil {
			lp = facts.WithInputAWSAuth(lp, data, malformed)
		}
	}
	if lp != nil {
		requireSameVerdicts(t, cat, c, set, snap, lp)
	}
	return cat.Evaluate(&validators.Context{Context: context.Background(), Config: c, Facts: snap, Input: set.Objects, Scope: validators.ScopeCLI}, set.Objects)
}

// outcome is what happened to one rule on one object.
const (
	quiet  = "quiet"
	fired  = "fires"
	notEv  = "not evaluated"
	absent = "-"
)

// outcomes maps "rule" (or "rule/object" with byObject) to fires / not evaluated; rules that ran and
// found nothing are absent.
func outcomes(res validators.Result, byObject bool) map[string]string {
	key := func(rule, obj string) string {
		if byObject {
			return rule + "/" + obj
		}
		return rule
	}
	out := map[string]string{}
	for _, n := range res.NotEvaluated {
		out[key(n.Rule, n.Object.Name)] = notEv
	}
	for _, f := range res.Findings {
		k := key(f.Rule, f.Object.Name)
		if out[k] == notEv {
			out[k] = fired + " and " + notEv
			continue
		}
		out[k] = fired
	}
	return out
}

func describeOutcomes(m map[string]string) string {
	var parts []string
	for k, v := range m {
		parts = append(parts, k+": "+v)
	}
	sort.Strings(parts)
	if len(parts) == 0 {
		return "(nothing fires, everything evaluated)"
	}
	return strings.Join(parts, "; ")
}

// TestFactsFixtureIsHealthy: with the full prod-eks snapshot, healthy classes of every family and
// every way of naming the node role, and a spot pool, produce no finding and nothing not evaluated
// (but the rules that read facts the snapshot leaves out: identityRules).
// Every other fact test starts from this world and breaks one thing.
func TestFactsFixtureIsHealthy(t *testing.T) {
	in := docs(
		nodeClass("al2023", eksSpec),
		nodeClass("al2023-pinned", withAMI("amiSelectorTerms:\n  - alias: al2023@v20251112\n")),
		nodeClass("al2023-by-name", withAMI("amiFamily: AL2023\namiSelectorTerms:\n  - name: amazon-eks-node-al2023-*-standard-1.33-*\n    owner: amazon\n")),
		nodeClass("bottlerocket", withAMI("amiSelectorTerms:\n  - alias: bottlerocket@latest\n")),
		nodeClass("windows", specWith(al2023Alias, "amiSelectorTerms:\n  - alias: windows2022@latest\n", defaultRole, "role: "+winRole+"\n")),
		nodeClass("windows-family", specWith(al2023Alias, "amiFamily: Windows2022\namiSelectorTerms:\n  - name: Windows_Server-2022-English-Core-EKS_Optimized-1.33-*\n    owner: amazon\n", defaultRole, "role: "+winRole+"\n")),
		nodeClass("profile", withRole("instanceProfile: "+nodeProfile+"\n")),
		nodeClass("pathed-role", withRole("role: "+teamRole+"\n")),
		nodeClass("role-arn", withRole("role: "+teamRoleARN+"\n")),
		nodeClass("by-id", specWith(subnetTerms, "subnetSelectorTerms:\n  - id: "+privateA+"\n  - id: "+privateB+"\n", groupTerms, "securityGroupSelectorTerms:\n  - id: "+clusterSG+"\n  - name: prod-eks-node\n")),
		nodePool("spot", "al2023", ""),
		strings.Replace(nodePool("spot-and-on-demand", "al2023", ""), `values: ["on-demand"]`, `values: ["spot", "on-demand"]`, 1),
	)
	res := evalFacts(t, in, clusterFacts(), "amiOwners:\n  allowed: [amazon]\n")
	if got := withoutIdentityRules(outcomes(res, true)); len(got) > 0 {
		t.Errorf("the healthy world should pass every rule: %s", describeOutcomes(got))
	}
	if res.Objects != 12 {
		t.Errorf("evaluated %d objects, want 12", res.Objects)
	}
}
