package validators_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/internal/corpus"
	"github.com/karpenter-guard/karpenter-guard/internal/livetest"
	"github.com/karpenter-guard/karpenter-guard/manifest"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/rules"
)

// BenchmarkEvaluate measures the whole static catalog on one object (target: under 20 µs per object).
// The input set holds 100 objects, as a GitOps repository would, so cross-object rules pay their lookups.
// EC2NodeClassUncommonUserData is the corpus class with a folded MIME header and a flow-style
// NodeConfig. The catalog remembers parsed userData by text (userdata.Parser), as it does when the
// audit re-evaluates unchanged classes; EC2NodeClassNewUserData gives every evaluation a text it has not
// parsed yet, the cost of a class whose userData was just edited.
func BenchmarkEvaluate(b *testing.B) {
	benchmarkEvaluate(b, facts.None{})
}

// BenchmarkEvaluateWithFacts measures the whole catalog with a realistic snapshot: 200 images, 50
// subnets over six zones, 100 access entries, the identities with the simulator's answers, the network,
// and 800 of us-east-1's real instance types (targets: under 50 µs per EC2NodeClass, under 200 µs per
// NodePool).
func BenchmarkEvaluateWithFacts(b *testing.B) {
	benchmarkEvaluate(b, facts.NewSnapshot(benchFacts(b, 800)))
}

// benchFacts returns the corpus cluster with every fact the rules read: the simulations are recorded
// from the AWS fake's simulator under policies that allow everything, as `facts export` would.
func benchFacts(b *testing.B, types int) *facts.ClusterFacts {
	data, err := os.ReadFile("scheduling/testdata/instance-types-region.yaml")
	if err != nil {
		b.Fatal(err)
	}
	region, err := facts.DecodeSnapshotFile(data)
	if err != nil {
		b.Fatal(err)
	}
	all := *region.InstanceTypes
	sample := make([]facts.InstanceType, min(types, len(all)))
	for i := range sample {
		sample[i] = all[i*len(all)/len(sample)]
	}
	cf := corpus.WithNetwork(corpus.WithIdentities(corpus.Facts(200, 50, 100)), sample)
	lt := livetest.Start(b, cf, livetest.Options{})
	if err := lt.Fake.SetWorld(cf, corpus.Policies(cf)); err != nil {
		b.Fatal(err)
	}
	set := &manifest.Set{}
	for i := 0; i < 50; i++ {
		set.Add(manifest.Source{Path: "nc.yaml", Data: []byte(corpus.NodeClass(i))})
		set.Add(manifest.Source{Path: "np.yaml", Data: []byte(corpus.NodePool(i))})
	}
	rec := facts.NewRecorder(lt.Provider)
	rules.Default().Evaluate(&validators.Context{Context: context.Background(), Facts: rec, Input: set.Objects, Scope: validators.ScopeCLI}, set.Objects)
	cf.Simulations = rec.Snapshot().Simulations
	return cf
}

func benchmarkEvaluate(b *testing.B, p facts.Provider) {
	set := &manifest.Set{}
	for i := 0; i < 50; i++ {
		set.Add(manifest.Source{Path: "nc.yaml", Data: []byte(corpus.NodeClass(i))})
		set.Add(manifest.Source{Path: "np.yaml", Data: []byte(corpus.NodePool(i))})
	}
	// The same class with userData the fast paths of package userdata decline (a folded MIME header,
	// a flow-style NodeConfig), so net/mail, mime/multipart and yaml.v3 parse it.
	uncommon := strings.NewReplacer(
		`Content-Type: multipart/mixed; boundary="//"`, "Content-Type: multipart/mixed;\n     boundary=\"//\"",
		"spec:\n      kubelet:\n        config:\n          shutdownGracePeriod: 30s", "spec: {kubelet: {config: {shutdownGracePeriod: 30s}}}",
	).Replace(corpus.NodeClass(0))
	if uncommon == corpus.NodeClass(0) {
		b.Fatal("the corpus userData changed: update the uncommon variant")
	}
	extra := &manifest.Set{}
	extra.Add(manifest.Source{Path: "uncommon.yaml", Data: []byte(uncommon)})
	// More distinct texts than the parser remembers, evaluated in turn: none is remembered.
	fresh := &manifest.Set{}
	for i := range 1024 {
		doc := strings.Replace(corpus.NodeClass(0), "#!/bin/bash\n", fmt.Sprintf("#!/bin/bash\n    # edit %d\n", i), 1)
		fresh.Add(manifest.Source{Path: "fresh.yaml", Data: []byte(doc)})
	}
	if len(fresh.Objects) != 1024 || fresh.Objects[0].NodeClass.Spec.UserData == nil || !strings.Contains(*fresh.Objects[0].NodeClass.Spec.UserData, "# edit 0") {
		b.Fatalf("the corpus userData changed: update the fresh variants (%d objects, %v)", len(fresh.Objects), fresh.Errors)
	}
	cat := rules.Default()
	for _, bc := range []struct {
		name string
		obj  *objects.Object
	}{
		{"EC2NodeClass", set.Objects[0]},
		{"NodePool", set.Objects[1]},
		{"EC2NodeClassUncommonUserData", extra.Objects[0]},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c := &validators.Context{Context: context.Background(), Facts: p, Input: set.Objects, Scope: validators.ScopeCLI}
			objs := []*objects.Object{bc.obj}
			if _, isNone := p.(facts.None); !isNone {
				if res := cat.Evaluate(c, objs); len(res.NotEvaluated) > 0 {
					b.Fatalf("with facts nothing should be left unevaluated: %+v", res.NotEvaluated)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				cat.Evaluate(c, objs)
			}
		})
	}
	b.Run("EC2NodeClassNewUserData", func(b *testing.B) {
		c := &validators.Context{Context: context.Background(), Facts: p, Input: set.Objects, Scope: validators.ScopeCLI}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			cat.Evaluate(c, fresh.Objects[i%len(fresh.Objects):i%len(fresh.Objects)+1])
			i++
		}
	})
	// The CLI evaluates a whole input at once, so per-evaluation memos (parsed aws-auth, resolved AMI
	// terms, the node-class index) are shared: the per-object cost of a 100-object set.
	b.Run("SetOf100", func(b *testing.B) {
		c := &validators.Context{Context: context.Background(), Facts: p, Input: set.Objects, Scope: validators.ScopeCLI}
		b.ReportAllocs()
		for b.Loop() {
			cat.Evaluate(c, set.Objects)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(set.Objects)), "ns/object")
	})
}
