package main

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
	"github.com/karpenter-guard/karpenter-guard/manifest"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/rules"
)

// TestKarpenterExamplesReachAndLaunch runs Karpenter's own v1 examples through the network and
// capacity rules, live against the AWS fake, in the production example's network with every instance
// type us-east-1 offers: a healthy cluster launches every one of them, so none may be refused, warned
// or left not evaluated by those rules.
func TestKarpenterExamplesReachAndLaunch(t *testing.T) {
	inRepoRoot(t)
	cf := readSnapshot(t, "examples/production/cluster-facts.yaml")
	region := readSnapshot(t, "validators/scheduling/testdata/instance-types-region.yaml")
	cf.InstanceTypes = region.InstanceTypes
	// Karpenter's examples pin no release: every family's latest parameter names an image of the
	// snapshot of its architecture, as SSM would.
	byArch := map[string]string{}
	for _, img := range *cf.Images {
		if _, ok := byArch[img.Architecture]; !ok && img.State == "available" {
			byArch[img.Architecture] = img.ID
		}
	}
	if byArch["x86_64"] == "" || byArch["arm64"] == "" {
		t.Fatalf("the production snapshot lacks an x86_64 or arm64 image: %v", byArch)
	}
	for _, fam := range []string{"al2023", "al2", "bottlerocket", "windows2019", "windows2022", "windows2025"} {
		for arch, param := range facts.AliasParameters(fam, "latest", cf.Cluster.Version) {
			(*cf.SSMParameters)[param] = byArch[arch]
		}
	}
	srv := fakeaws.New(cf)
	p := livetest.NewProvider(t, srv.Start(t), cf, livetest.Options{})
	files, err := filepath.Glob("testdata/realworld/aws__karpenter-provider-aws/examples/v1/*.yaml")
	if err != nil || len(files) < 20 {
		t.Fatalf("Karpenter's examples: %v %v", files, err)
	}
	network := map[string]bool{}
	for _, r := range rules.Default().Rules() {
		if slices.ContainsFunc(slices.Concat(r.Needs, r.MayNeed), func(f facts.Fact) bool {
			return slices.Contains([]facts.Fact{facts.ClusterIPFamily, facts.ClusterEndpointAccess, facts.KMSKeys, facts.ServiceQuotas, facts.CapacityReservations, facts.InstanceTypes}, f)
		}) || strings.HasPrefix(r.ID, "nodepool-") && r.ID != "nodepool-v1beta1" && r.ID != "nodepool-no-limits" && r.ID != "nodepool-nodeclass-missing" {
			network[r.ID] = true
		}
	}
	if len(network) != 13 {
		t.Fatalf("%d network and capacity rules: %v", len(network), network)
	}
	pools := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s := strings.NewReplacer("${CLUSTER_NAME}", "prod-eks", "KarpenterNodeRole-${CLUSTER_NAME}", "KarpenterNodeRole-prod-eks").Replace(string(b))
		set := &manifest.Set{}
		set.Add(manifest.Source{Path: f, Data: []byte(s)})
		for _, o := range set.Objects {
			if o.NodePool != nil {
				pools++
			}
		}
		res := rules.Default().Evaluate(&validators.Context{Context: context.Background(), Config: config.Default(), Facts: p, Input: set.Objects, Scope: validators.ScopeCLI}, set.Objects)
		for _, fd := range res.Findings {
			if network[fd.Rule] {
				t.Errorf("%s: %s %s on %s: %s", filepath.Base(f), fd.Action, fd.Rule, fd.Object.Name, fd.Message)
			}
		}
		for _, n := range res.NotEvaluated {
			if network[n.Rule] {
				t.Errorf("%s: %s not evaluated on %s: %s", filepath.Base(f), n.Rule, n.Object.Name, n.Reason)
			}
		}
	}
	if pools < 20 {
		t.Errorf("only %d NodePools judged", pools)
	}
}

func readSnapshot(t *testing.T, path string) *facts.ClusterFacts {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := facts.DecodeSnapshotFile(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return cf
}
