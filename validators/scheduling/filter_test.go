package scheduling

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/internal/golden"
)

func withMin(r Requirement, m int) Requirement {
	r.MinValues = &m
	return r
}

// filterCases are NodePools over the small fixture in usEast1 (34 of its 37 types are usable: a1 is
// not under AL2023, dl2q.24xlarge is not offered in us-east-1).
var filterCases = []struct {
	name string
	env  func() Env
	reqs []Requirement
}{
	{"no requirements", usEast1, nil},
	{"a typical amd64 spot pool", usEast1, []Requirement{
		req(LabelArch, OpIn, "amd64"),
		req(LabelCapacityType, OpIn, "spot"),
		req(LabelCategory, OpIn, "c", "m", "r"),
		req(LabelGeneration, OpGt, "5"),
		req(LabelZone, OpIn, "us-east-1c"),
	}},
	{"a family that does not exist", usEast1, []Requirement{
		req(LabelFamily, OpIn, "m9"),
		req(LabelCapacityType, OpIn, "on-demand"),
	}},
	{"GPU pool", usEast1, []Requirement{
		req(LabelGPUManufacturer, OpIn, "nvidia"),
		req(LabelGPUCount, OpLte, "1"),
		req(LabelGPUMemory, OpGte, "16384"),
		req(LabelGPUName, OpNotIn, "t4g"),
	}},
	{"accelerators and local NVMe", usEast1, []Requirement{
		req(LabelAcceleratorManufacturer, OpIn, "aws"),
		req(LabelLocalNVMe, OpExists),
	}},
	{"no GPU, no accelerator, not bare metal, Nitro, encryption in transit", usEast1, []Requirement{
		req(LabelGPUCount, OpDoesNotExist),
		req(LabelAcceleratorName, OpDoesNotExist),
		req(LabelHypervisor, OpIn, "nitro"),
		req(LabelEncryptionInTransit, OpIn, "true"),
		req(LabelCapabilityFlex, OpIn, "false"),
		req(LabelCPU, OpLt, "8"),
		req(LabelMemory, OpGt, "4096"),
		req(LabelCPUSustainedClockSpeed, OpGte, "3000"),
		req(LabelEBSBandwidth, OpGte, "10000"),
		req(LabelCPUManufacturer, OpNotIn, "amd"),
	}},
	{"minValues", usEast1, []Requirement{
		withMin(req(LabelFamily, OpIn, "m5", "m5d", "m7g", "c7g", "t3"), 4),
		withMin(req(LabelArch, OpExists), 3),
		withMin(req(LabelZone, OpIn, "us-east-1a"), 5),
		withMin(req(LabelCapacityType, OpExists), 2),
		withMin(req("karpenter.k8s.aws/instance-network-bandwidth", OpGt, "100"), 2),
	}},
	{"not judged", func() Env {
		env := usEast1()
		env.Zones[0].ID, env.Region = "", ""
		return env
	}, []Requirement{
		req("karpenter.k8s.aws/instance-network-bandwidth", OpGt, "100000"),
		req("team", OpIn, "ml"),
		req(LabelZoneID, OpIn, "use1-az99"),
		req(LabelRegion, OpIn, "eu-west-1"),
		req(LabelSize, "Like", "large"),
		req(LabelSize, OpIn, "large", "xlarge", "metal"),
	}},
	{"reserved capacity", func() Env {
		env := usEast1()
		env.Reservations = map[string][]string{"p5.48xlarge": {"us-east-1a"}, "g6.xlarge": {"us-east-1e"}}
		return env
	}, []Requirement{
		req(LabelCapacityType, OpIn, "reserved"),
	}},
	{"Windows", func() Env {
		env := usEast1()
		env.AMIFamily, env.Architectures = "Windows2022", []string{"amd64"}
		return env
	}, []Requirement{
		req(LabelOS, OpIn, "windows"),
		req(LabelWindowsBuild, OpIn, "10.0.20348"),
		req(LabelTenancy, OpIn, "dedicated"),
		req(LabelSize, OpIn, "large"),
	}},
	{"zones and zone IDs", usEast1, []Requirement{
		req(LabelZone, OpNotIn, "us-east-1a", "us-east-1b", "us-east-1c"),
		req(LabelZoneID, OpIn, "use1-az5"),
		req(LabelSize, OpIn, "large"),
	}},
	{"nothing usable", func() Env {
		env := usEast1()
		env.Zones = []Zone{{"us-west-2a", "usw2-az1"}}
		return env
	}, []Requirement{req(LabelArch, OpIn, "amd64")}},
}

// TestFilterGolden records what Filter finds for each case: reviewed by hand against the fixture.
func TestFilterGolden(t *testing.T) {
	types := loadTypes(t, fixtureTypes)
	var b strings.Builder
	for _, c := range filterCases {
		res := Filter(types, c.env(), c.reqs)
		fmt.Fprintf(&b, "## %s\n", c.name)
		for i, r := range c.reqs {
			fmt.Fprintf(&b, "requirement %s %s %q", r.Key, r.Operator, r.Values)
			if r.MinValues != nil {
				fmt.Fprintf(&b, " minValues %d", *r.MinValues)
			}
			fmt.Fprintf(&b, ": rejects %d\n", res.Rejected[i])
		}
		fmt.Fprintf(&b, "usable %d; unusable %v\n", res.Usable, sortedCounts(res.Unusable))
		fmt.Fprintf(&b, "eliminated %v\n", sortedCounts(res.Eliminated))
		for _, r := range res.Ignored {
			fmt.Fprintf(&b, "ignored %s %s %q\n", r.Key, r.Operator, r.Values)
		}
		for _, m := range res.MinValues {
			fmt.Fprintf(&b, "minValues %s: %d distinct of %d, satisfied %v\n", m.Requirement.Key, m.Distinct, *m.Requirement.MinValues, m.Satisfied())
		}
		names := make([]string, 0, len(res.Types))
		for _, ty := range res.Types {
			names = append(names, ty.InstanceType)
		}
		fmt.Fprintf(&b, "types (%d): %s\n\n", len(names), strings.Join(names, " "))
	}
	golden.Compare(t, "testdata/filter.golden", b.String(), *update)
}

func sortedCounts[K ~string](m map[K]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// TestFilterAgreesWithLabels checks Filter against the plain definition: a usable type survives when
// Admits accepts its Labels for every judgeable requirement.
func TestFilterAgreesWithLabels(t *testing.T) {
	types := loadTypes(t, fixtureTypes)
	for _, c := range filterCases {
		env := c.env()
		res := Filter(types, env, c.reqs)
		var want []string
		usable := 0
		for i := range types {
			labels, why := Labels(&types[i], env)
			if why != Usable {
				continue
			}
			usable++
			ok := true
			for _, r := range c.reqs {
				judged := r.Judgeable() && (r.Key != LabelRegion || env.Region != "") && (r.Key != LabelZoneID || allIDs(env))
				if judged {
					ok = ok && r.Admits(labels[r.Key])
				}
			}
			if ok {
				want = append(want, types[i].InstanceType)
			}
		}
		var got []string
		for _, ty := range res.Types {
			got = append(got, ty.InstanceType)
		}
		if !slices.Equal(got, want) || res.Usable != usable {
			t.Errorf("%s: got %d usable, %v; want %d usable, %v", c.name, res.Usable, got, usable, want)
		}
	}
}

func allIDs(env Env) bool {
	for _, z := range env.Zones {
		if z.ID == "" {
			return false
		}
	}
	return len(env.Zones) > 0
}

func TestFilterRegion(t *testing.T) {
	types := loadTypes(t, fixtureRegion)
	if len(types) < 1000 {
		t.Fatalf("the region fixture has %d types", len(types))
	}
	env := regionEnv()
	res := Filter(types, env, nil)
	if res.Usable+res.Unusable[UnusableAMIFamily] != len(types) || res.Unusable[UnusableAMIFamily] != 6 { // the six a1 types
		t.Errorf("usable %d, unusable %v of %d", res.Usable, res.Unusable, len(types))
	}
	res = Filter(types, env, benchRequirements())
	if len(res.Types) == 0 || len(res.Types) == res.Usable || len(res.MinValues) != 1 || !res.MinValues[0].Satisfied() {
		t.Errorf("bench pool: %d of %d types, minValues %+v", len(res.Types), res.Usable, res.MinValues)
	}
}
