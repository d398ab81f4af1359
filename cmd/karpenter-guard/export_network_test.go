package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/facts"
)

// TestFactsExportNetwork: `facts export` from the AWS fake serving each example writes the network
// facts the rules asked for exactly as the fake served them: the cluster's endpoint and control plane,
// the VPC's DNS attributes, NAT gateways and endpoints, the subnets' tables and routes, the groups'
// rules. Across the examples, every network section is written somewhere.
func TestFactsExportNetwork(t *testing.T) {
	inRepoRoot(t)
	awsEnv(t)
	written := map[string]bool{}
	for _, dir := range exampleDirs(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			_, flags := fakeFor(t, filepath.Join(dir, "cluster-facts.yaml"))
			code, exported, stderr := cli(t, "", append([]string{"facts", "export", "-f", dir}, flags[1:]...)...)
			if code != 0 {
				t.Fatalf("facts export: exit %d: %s", code, stderr)
			}
			got, err := facts.DecodeSnapshotFile([]byte(exported))
			if err != nil {
				t.Fatalf("the exported snapshot does not decode: %v\n%s", err, exported)
			}
			data, err := os.ReadFile(filepath.Join(dir, "cluster-facts.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			served, err := facts.DecodeSnapshotFile(data)
			if err != nil {
				t.Fatal(err)
			}
			same := func(section string, want, have any) {
				t.Helper()
				written[section] = true
				w, _ := json.Marshal(want)
				h, _ := json.Marshal(have)
				if string(w) != string(h) {
					t.Errorf("exported %s:\n%s\nserved:\n%s", section, h, w)
				}
			}
			same("cluster network", served.Cluster.ClusterNetwork, got.Cluster.ClusterNetwork)
			if got.VPC != nil {
				same("vpc", served.VPC, got.VPC)
			}
			if got.NATGateways != nil {
				same("natGateways", served.NATGateways, got.NATGateways)
			}
			if got.VPCEndpoints != nil {
				same("vpcEndpoints", served.VPCEndpoints, got.VPCEndpoints)
			}
			if got.Subnets != nil && served.Subnets != nil {
				for _, s := range *got.Subnets {
					for _, w := range *served.Subnets {
						if w.ID == s.ID && w.RouteTableID != "" {
							same("subnet routes", w.SubnetNetwork, s.SubnetNetwork)
						}
					}
				}
			}
			if got.SecurityGroups != nil && served.SecurityGroups != nil {
				for _, g := range *got.SecurityGroups {
					for _, w := range *served.SecurityGroups {
						if w.ID == g.ID && w.RulesKnown() {
							same("group rules", w.SecurityGroupRules, g.SecurityGroupRules)
						}
					}
				}
			}
		})
	}
	for _, section := range []string{"cluster network", "vpc", "natGateways", "vpcEndpoints", "subnet routes", "group rules"} {
		if !written[section] {
			t.Errorf("no example's export wrote %s: add an example whose rules ask for it", section)
		}
	}
}
