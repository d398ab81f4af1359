package rules_test

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/internal/golden"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/rules"
)

// TestControllerLaunchPermissionsRows: the questions the controller-permission rules ask, as the
// table gives them: T per NodePool (karpenter.sh/nodepool "" when none references the class), spot
// resources only for a pool that admits spot, RunInstances never on the fleet, T_ip for the instance
// profile, the exact context of each row. The golden file lists every row of two classes.
func TestControllerLaunchPermissionsRows(t *testing.T) {
	tagged := nodeClass("tagged", eksSpec+"tags:\n  team: platform\n")
	// capacityPool's pool (without a capacity-type requirement: spot allowed) references "default".
	spot := strings.Replace(capacityPool("spot", ""), "name: default\n", "name: tagged\n", 1)
	// A pool without a capacity-type requirement whose template label pins on-demand admits no spot.
	pinned := "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: pinned\nspec:\n  template:\n    metadata:\n      labels:\n        karpenter.sh/capacity-type: on-demand\n" +
		"    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: labelled}\n"
	in := docs(tagged, nodePool("on-demand", "tagged", ""), spot, nodeClass("lonely", withRole("instanceProfile: "+nodeProfile+"\n")),
		nodeClass("labelled", eksSpec), pinned)
	cfg, err := config.Parse([]byte(queueConfig), rules.Default().IDs())
	if err != nil {
		t.Fatal(err)
	}
	cf, err := facts.DecodeSnapshotFile([]byte(controllerFacts(nil)))
	if err != nil {
		t.Fatal(err)
	}
	set := readString(t, "in.yaml", in)
	c := &validators.Context{Context: context.Background(), Config: cfg, Facts: facts.NewSnapshot(cf), Input: set.Objects, Scope: validators.ScopeCLI}
	// calls holds each class's simulator calls with the name of their row.
	type call struct {
		ID  string
		Row facts.SimulationRow
	}
	calls := map[string][]call{}
	var out strings.Builder
	for _, o := range set.Objects {
		if o.NodeClass == nil {
			continue
		}
		rs, err := rules.ControllerRows(c, o)
		if err != nil {
			t.Fatalf("%s: %v", o.Name, err)
		}
		fmt.Fprintf(&out, "## EC2NodeClass %s\n", o.Name)
		for _, row := range rs {
			for _, c := range row.Calls {
				calls[o.Name] = append(calls[o.Name], call{row.ID, c})
			}
		}
		for _, r := range calls[o.Name] {
			fmt.Fprintf(&out, "%s %s on %s\n", r.ID, strings.Join(r.Row.Actions, ", "), strings.Join(r.Row.Resources, ", "))
			for _, k := range slices.Sorted(maps.Keys(r.Row.Context)) {
				fmt.Fprintf(&out, "    %s: %q\n", k, r.Row.Context[k])
			}
		}
	}
	golden.Compare(t, filepath.Join("testdata", "controller-launch-permissions-rows"+".golden"), out.String(), *update)

	pools := func(class, id, action string) map[string]facts.SimulationRow {
		got := map[string]facts.SimulationRow{}
		for _, r := range calls[class] {
			if r.ID != id || !slices.Contains(r.Row.Actions, action) {
				continue
			}
			pool, ok := r.Row.Context["aws:RequestTag/karpenter.sh/nodepool"]
			if !ok {
				pool = r.Row.Context["aws:ResourceTag/karpenter.sh/nodepool"]
			}
			if len(pool) != 1 {
				t.Fatalf("%s %s of %s: no nodepool tag in %v", id, action, class, r.Row.Context)
			}
			got[pool[0]] = r.Row
		}
		return got
	}
	for _, r := range slices.Concat(calls["tagged"], calls["lonely"]) {
		if r.Row.Principal != controllerRoleARN {
			t.Errorf("%s asks as %s", r.ID, r.Row.Principal)
		}
		if slices.Contains(r.Row.Actions, "ec2:RunInstances") && slices.ContainsFunc(r.Row.Resources, func(s string) bool { return strings.HasSuffix(s, ":fleet/*") }) {
			t.Errorf("%s asks ec2:RunInstances on the fleet", r.ID)
		}
	}

	lt := pools("tagged", "L2", "ec2:CreateLaunchTemplate")
	if len(lt) != 2 || lt["on-demand"].Key() == "" || lt["spot"].Key() == "" {
		t.Fatalf("L2 of two pools: want one row per pool, got %v", slices.Collect(maps.Keys(lt)))
	}
	want := map[string][]string{
		"aws:RequestTag/team": {"platform"}, "aws:RequestTag/karpenter.sh/nodepool": {"spot"},
		"aws:RequestTag/kubernetes.io/cluster/prod-eks": {"owned"}, "aws:RequestTag/eks:eks-cluster-name": {"prod-eks"},
		"aws:RequestTag/karpenter.k8s.aws/ec2nodeclass": {"tagged"}, "aws:RequestedRegion": {"us-east-1"},
		facts.ContextTagKeys: {"eks:eks-cluster-name", "karpenter.k8s.aws/ec2nodeclass", "karpenter.sh/nodepool", "kubernetes.io/cluster/prod-eks", "team"},
	}
	if got := lt["spot"].Context; !maps.EqualFunc(got, want, slices.Equal) {
		t.Errorf("L2 context of the spot pool:\n got %v\nwant %v", got, want)
	}
	fleet := pools("tagged", "L4", "ec2:CreateFleet")
	spotRequests := func(r facts.SimulationRow) bool {
		return slices.ContainsFunc(r.Resources, func(s string) bool { return strings.HasSuffix(s, ":spot-instances-request/*") })
	}
	if !spotRequests(fleet["spot"]) || spotRequests(fleet["on-demand"]) {
		t.Errorf("L4: spot-instances-request/* belongs to the spot pool's row only: %v / %v", fleet["spot"].Resources, fleet["on-demand"].Resources)
	}
	if got := pools("lonely", "L2", "ec2:CreateLaunchTemplate"); len(got) != 1 || got[""].Key() == "" {
		t.Errorf("a class no pool references: want karpenter.sh/nodepool \"\", got %v", slices.Collect(maps.Keys(got)))
	}
	if got := pools("labelled", "L4", "ec2:CreateFleet"); len(got) != 1 || got["pinned"].Key() == "" {
		t.Errorf("the pinned pool's L4: got %v", slices.Collect(maps.Keys(got)))
	}
	for _, r := range calls["lonely"] {
		if r.ID == "L10" || r.ID == "L11" || r.ID == "D2" {
			t.Errorf("spec.instanceProfile: Karpenter creates no profile, yet %s is asked", r.ID)
		}
	}
	for _, r := range slices.Concat(calls["lonely"], calls["labelled"]) {
		if slices.Contains(r.Row.Actions, "ec2:DescribeSpotPriceHistory") || slices.ContainsFunc(r.Row.Resources, func(s string) bool { return strings.Contains(s, "spot-instances-request") }) {
			t.Errorf("no pool launches spot from the class, yet %s asks %v on %v", r.ID, r.Row.Actions, r.Row.Resources)
		}
	}
	var ip facts.SimulationRow
	for _, r := range calls["tagged"] {
		if r.ID == "L10" && r.Row.Actions[0] == "iam:TagInstanceProfile" {
			ip = r.Row
		}
	}
	if ip.Context["aws:ResourceTag/topology.kubernetes.io/region"] == nil || ip.Context["aws:RequestTag/topology.kubernetes.io/region"] == nil ||
		ip.Context["aws:RequestTag/karpenter.sh/nodepool"] != nil || ip.Context["aws:RequestedRegion"] != nil {
		t.Errorf("TagInstanceProfile: want request and resource tags of T_ip, no nodepool, no region key: %v", ip.Context)
	}
}
