package main

import (
	"context"
	"os"
	"path/filepath"
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

// TestKarpenterExamplesUnderItsOwnPolicy: Karpenter's own v1 examples (testdata/realworld), their
// cluster name filled in, in a cluster whose controller has Karpenter's getting-started policy and
// whose node role has the managed node policies (examples/production, e2e/testdata/policies): no
// identity rule denies any of them or is left not evaluated; only the Windows examples are warned
// that the cluster's EC2_LINUX entry lacks eks:kube-proxy-windows, which they need for DNS.
func TestKarpenterExamplesUnderItsOwnPolicy(t *testing.T) {
	inRepoRoot(t)
	data, err := os.ReadFile("examples/production/cluster-facts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cf, err := facts.DecodeSnapshotFile(data)
	if err != nil {
		t.Fatal(err)
	}
	cf.Simulations = nil
	raw, err := os.ReadFile("e2e/testdata/policies/production.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pol, err := fakeaws.LoadPolicies(raw)
	if err != nil {
		t.Fatal(err)
	}
	srv := fakeaws.New(cf, fakeaws.WithPolicies(pol))
	p := livetest.NewProvider(t, srv.Start(t), cf, livetest.Options{})
	files, err := filepath.Glob("testdata/realworld/aws__karpenter-provider-aws/examples/v1/*.yaml")
	if err != nil || len(files) < 20 {
		t.Fatalf("Karpenter's examples: %v %v", files, err)
	}
	warned := map[string]bool{}
	identity := map[string]bool{"node-role-trust-policy": true, "node-role-join-permissions": true, "node-role-runtime-permissions": true, "controller-launch-permissions": true, "controller-runtime-permissions": true, "node-username-mismatch": true, "windows-node-missing-kube-proxy-group": true}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s := strings.NewReplacer("${CLUSTER_NAME}", "prod-eks", "KarpenterNodeRole-${CLUSTER_NAME}", "KarpenterNodeRole-prod-eks").Replace(string(b))
		set := &manifest.Set{}
		set.Add(manifest.Source{Path: f, Data: []byte(s)})
		res := rules.Default().Evaluate(&validators.Context{Context: context.Background(), Config: config.Default(), Facts: p, Input: set.Objects, Scope: validators.ScopeCLI}, set.Objects)
		for _, fd := range res.Findings {
			switch {
			case !identity[fd.Rule]:
			case fd.Rule == "windows-node-missing-kube-proxy-group" && fd.Action == config.ActionWarn:
				warned[filepath.Base(f)] = true
			default:
				t.Errorf("%s: %s %s on %s: %s", filepath.Base(f), fd.Action, fd.Rule, fd.Object.Name, fd.Message)
			}
		}
		for _, n := range res.NotEvaluated {
			if identity[n.Rule] {
				t.Errorf("%s: %s not evaluated: %s", filepath.Base(f), n.Rule, n.Reason)
			}
		}
	}
	want := []string{"windows-2019.yaml", "windows-2022.yaml", "windows-2025.yaml", "windows-custom-userdata.yaml"}
	for _, w := range want {
		if !warned[w] {
			t.Errorf("%s: no warning that the EC2_LINUX entry lacks eks:kube-proxy-windows", w)
		}
	}
	if len(warned) != len(want) {
		t.Errorf("warned %v, want exactly %v", warned, want)
	}
}
