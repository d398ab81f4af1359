package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/internal/fakeaws"
	"github.com/karpenter-guard/karpenter-guard/internal/livetest"
	"github.com/karpenter-guard/karpenter-guard/manifest"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/rules"
)

// simulationsMarker starts the generated part of an example snapshot.
const simulationsMarker = "# simulations: written by TestExampleSimulations"

// TestExampleSimulations: the simulations of an example cluster whose IAM policies are in
// e2e/testdata/policies are what the IAM policy simulator answers for those policies: the rules run
// through the live provider against the AWS fake evaluating the policies (the snapshot's own entries
// left out), and a recorder writes down every answer, as `facts export` does on a real cluster. With
// -update the examples are rewritten. So the examples' entries are the policies' consequences, not
// typed by hand, and every question the rules ask has one.
func TestExampleSimulations(t *testing.T) {
	inRepoRoot(t)
	files, err := filepath.Glob("e2e/testdata/policies/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("policies: %v %v", files, err)
	}
	for _, pf := range files {
		name := strings.TrimSuffix(filepath.Base(pf), ".yaml")
		dir := filepath.Join("examples", "clusters", name)
		if name == "production" {
			dir = filepath.Join("examples", "production")
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			snapFile := filepath.Join(dir, "cluster-facts.yaml")
			data, err := os.ReadFile(snapFile)
			if err != nil {
				t.Fatal(err)
			}
			cf, err := facts.DecodeSnapshotFile(data)
			if err != nil {
				t.Fatal(err)
			}
			cf.Simulations = nil
			raw, err := os.ReadFile(pf)
			if err != nil {
				t.Fatal(err)
			}
			policies, err := fakeaws.LoadPolicies(raw)
			if err != nil {
				t.Fatalf("%s: %v", pf, err)
			}
			srv := fakeaws.New(cf, fakeaws.WithPolicies(policies))
			rec := facts.NewRecorder(livetest.NewProvider(t, srv.Start(t), cf, livetest.Options{}))
			set := &manifest.Set{}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if name := e.Name(); strings.HasSuffix(name, ".yaml") && name != "cluster-facts.yaml" {
					src, err := os.ReadFile(filepath.Join(dir, name))
					if err != nil {
						t.Fatal(err)
					}
					set.Add(manifest.Source{Path: filepath.Join(dir, name), Data: src})
				}
			}
			var p facts.Provider = rec
			if auth, malformed, ok := validators.InputAWSAuth(set.Objects); ok {
				p = facts.WithInputAWSAuth(p, auth, malformed)
			}
			c := &validators.Context{Context: context.Background(), Config: config.Default(), Facts: p, Input: set.Objects, Scope: validators.ScopeCLI}
			rules.Default().Evaluate(c, set.Objects)
			sims := rec.Snapshot().Simulations
			if sims == nil || len(*sims) == 0 {
				t.Fatalf("no simulation was recorded; gaps: %+v", rec.Gaps())
			}
			out, err := yaml.Marshal(map[string]any{"simulations": *sims})
			if err != nil {
				t.Fatal(err)
			}
			head, _, _ := strings.Cut(string(data), simulationsMarker)
			want := strings.TrimRight(head, "\n") + "\n" + simulationsMarker + " from " + filepath.ToSlash(pf) + "\n" + string(out)
			if *update {
				if err := os.WriteFile(snapFile, []byte(want), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if string(data) != want {
				t.Errorf("%s's simulations are not what the simulator answers for %s (%d questions); run go test ./cmd/karpenter-guard -run TestExampleSimulations -update", snapFile, pf, len(*sims))
			}
		})
	}
}
