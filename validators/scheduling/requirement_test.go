package scheduling

import (
	"math"
	"slices"
	"strconv"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/objects"
)

func req(key, op string, values ...string) Requirement {
	return Requirement{Key: key, Written: key, Operator: op, Values: values}
}

func TestAdmits(t *testing.T) {
	maxInt, minInt := strconv.Itoa(math.MaxInt), strconv.Itoa(math.MinInt)
	for _, c := range []struct {
		req    Requirement
		values []string
		want   bool
	}{
		{req("k", OpIn, "a", "b"), []string{"a"}, true},
		{req("k", OpIn, "a", "b"), []string{"c"}, false},
		{req("k", OpIn, "a", "b"), nil, false},
		{req("k", OpIn, "a"), []string{"c", "a"}, true}, // a set intersects
		{req("k", OpIn), []string{"a"}, false},
		{req("k", OpIn, ""), []string{""}, true}, // bare metal's hypervisor
		{req("k", OpIn, "A"), []string{"a"}, false},

		{req("k", OpNotIn, "a"), []string{"b"}, true},
		{req("k", OpNotIn, "a"), []string{"a"}, false},
		{req("k", OpNotIn, "a"), nil, true}, // undefined
		{req("k", OpNotIn, "a"), []string{}, true},
		{req("k", OpNotIn, "a"), []string{"a", "b"}, true}, // b remains
		{req("k", OpNotIn, "a", "b"), []string{"a", "b"}, false},
		{req("k", OpNotIn), []string{"a"}, true},

		{req("k", OpExists), []string{"a"}, true},
		{req("k", OpExists), []string{""}, true},
		{req("k", OpExists), nil, false},
		{req("k", OpDoesNotExist), nil, true},
		{req("k", OpDoesNotExist), []string{"a"}, false},

		{req("k", OpGt, "4"), []string{"5"}, true},
		{req("k", OpGt, "4"), []string{"4"}, false},
		{req("k", OpGt, "4"), nil, false},
		{req("k", OpGt, "4"), []string{"large"}, false},
		{req("k", OpGt, "4"), []string{"4", "8"}, true},
		{req("k", OpGt, "-1"), []string{"0"}, true},
		{req("k", OpGt, "x"), []string{"5"}, false},
		{req("k", OpGt, "4", "5"), []string{"9"}, false},
		{req("k", OpGt), []string{"9"}, false},
		{req("k", OpGt, maxInt), []string{maxInt}, false},
		{req("k", OpGt, "4.5"), []string{"5"}, false},
		{req("k", OpGt, "4"), []string{"0010"}, true}, // Atoi, as Karpenter compares

		{req("k", OpLt, "4"), []string{"3"}, true},
		{req("k", OpLt, "4"), []string{"4"}, false},
		{req("k", OpLt, "4"), nil, false},
		{req("k", OpLt, minInt), []string{minInt}, false},
		{req("k", OpLt, "4"), []string{"-7"}, true},

		{req("k", OpGte, "4"), []string{"4"}, true},
		{req("k", OpGte, "4"), []string{"3"}, false},
		{req("k", OpGte, "4"), nil, false},
		{req("k", OpLte, "4"), []string{"4"}, true},
		{req("k", OpLte, "4"), []string{"5"}, false},
		{req("k", OpLte, "4"), []string{"x"}, false},

		{req("k", "in", "a"), []string{"a"}, false}, // unknown operator
		{req("k", "", "a"), []string{"a"}, false},
	} {
		if got := c.req.Admits(c.values); got != c.want {
			t.Errorf("%s %v admits %q: got %v, want %v", c.req.Operator, c.req.Values, c.values, got, c.want)
		}
	}
}

// TestMatcherAgreesWithAdmits checks the allocation-free matching Filter does against Admits on the
// label values Labels computes, for every fixture type, every label and requirements of every
// operator built from the values the fixture has.
func TestMatcherAgreesWithAdmits(t *testing.T) {
	types := loadTypes(t, fixtureTypes)
	envs := []Env{usEast1()}
	windows := usEast1()
	windows.AMIFamily, windows.Architectures = "Windows2019", []string{"amd64"}
	reserved := usEast1()
	reserved.Reservations = map[string][]string{"p5.48xlarge": {"us-east-1a"}, "m5.large": {"us-east-1b"}}
	envs = append(envs, windows, reserved)

	seen := map[string][]string{} // every value of each label over the fixture
	for _, env := range envs {
		for i := range types {
			labels, _ := Labels(&types[i], env)
			for k, vs := range labels {
				for _, v := range vs {
					if !slices.Contains(seen[k], v) {
						seen[k] = append(seen[k], v)
					}
				}
			}
		}
	}
	checked := 0
	for k := range numKeys {
		name := k.name()
		values := append(slices.Clone(seen[name]), "", "junk", "04", "NVIDIA", "Radeon Pro V520")
		var reqs []Requirement
		for _, op := range []string{OpExists, OpDoesNotExist, "Equals"} {
			reqs = append(reqs, req(name, op))
		}
		for _, v := range values {
			reqs = append(reqs, req(name, OpIn, v), req(name, OpNotIn, v), req(name, OpIn, v, "junk"))
			for _, op := range []string{OpGt, OpLt, OpGte, OpLte} {
				reqs = append(reqs, req(name, op, v))
			}
		}
		for _, env := range envs {
			p := prepare(&env)
			ms, ignored := compile(reqs, p)
			if len(ignored) != 1 { // Equals
				t.Fatalf("%s: ignored %v", name, ignored)
			}
			for i := range types {
				ty := &types[i]
				labels, _ := Labels(ty, env)
				b, why := inspect(ty, p)
				if why != Usable {
					b.zones = p.zoneMask(ty.Zones)
					b.capacity = capacityTypes(ty, p, b.zones)
				}
				v := valueOf(ty, p, &b, k)
				for j := range ms {
					r := reqs[ms[j].req]
					if got, want := ms[j].match(&v), r.Admits(labels[name]); got != want {
						t.Errorf("%s in %s: %s %s %q: matcher %v, Admits(%q) %v", ty.InstanceType, env.AMIFamily, name, r.Operator, r.Values, got, labels[name], want)
					}
					checked++
				}
			}
		}
	}
	if checked < 100000 {
		t.Errorf("only %d comparisons", checked)
	}
}

func TestFromNodePool(t *testing.T) {
	two := 2
	np := &objects.NodePool{Spec: objects.NodePoolSpec{Template: objects.NodeClaimTemplate{
		Metadata: objects.Metadata{Labels: map[string]string{
			"team": "ml", "beta.kubernetes.io/arch": "arm64", "failure-domain.beta.kubernetes.io/zone": "us-east-1a",
		}},
		Spec: objects.NodeClaimSpec{Requirements: []objects.Requirement{
			{Key: "karpenter.sh/capacity-type", Operator: "In", Values: []string{"spot"}},
			{Key: "beta.kubernetes.io/instance-type", Operator: "NotIn", Values: []string{"t2.micro"}},
			{Key: "failure-domain.beta.kubernetes.io/region", Operator: "Exists"},
			{Key: "beta.kubernetes.io/os", Operator: "In", Values: []string{"linux"}},
			{Key: "karpenter.k8s.aws/instance-family", Operator: "Exists", MinValues: &two},
		}},
	}}}
	want := []Requirement{
		{Key: LabelCapacityType, Written: LabelCapacityType, Operator: OpIn, Values: []string{"spot"}, Index: 0},
		{Key: LabelInstanceType, Written: "beta.kubernetes.io/instance-type", Operator: OpNotIn, Values: []string{"t2.micro"}, Index: 1},
		{Key: LabelRegion, Written: "failure-domain.beta.kubernetes.io/region", Operator: OpExists, Index: 2},
		{Key: LabelOS, Written: "beta.kubernetes.io/os", Operator: OpIn, Values: []string{"linux"}, Index: 3},
		{Key: LabelFamily, Written: LabelFamily, Operator: OpExists, MinValues: &two, Index: 4},
		{Key: LabelArch, Written: "beta.kubernetes.io/arch", Operator: OpIn, Values: []string{"arm64"}, FromLabel: true, Index: -1},
		{Key: LabelZone, Written: "failure-domain.beta.kubernetes.io/zone", Operator: OpIn, Values: []string{"us-east-1a"}, FromLabel: true, Index: -1},
		{Key: "team", Written: "team", Operator: OpIn, Values: []string{"ml"}, FromLabel: true, Index: -1},
	}
	got := FromNodePool(np)
	if len(got) != len(want) {
		t.Fatalf("got %d requirements, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Key != w.Key || g.Written != w.Written || g.Operator != w.Operator || !slices.Equal(g.Values, w.Values) ||
			g.FromLabel != w.FromLabel || g.Index != w.Index || (g.MinValues == nil) != (w.MinValues == nil) {
			t.Errorf("requirement %d: got %+v, want %+v", i, g, w)
		}
	}
	if got := FromNodePool(&objects.NodePool{}); len(got) != 0 {
		t.Errorf("empty pool: %+v", got)
	}
}

func TestComputable(t *testing.T) {
	for k := range numKeys {
		if !Computable(k.name()) {
			t.Errorf("%s is not computable", k.name())
		}
	}
	for _, k := range []string{
		"karpenter.k8s.aws/instance-network-bandwidth", "karpenter.k8s.aws/nitro-sandbox",
		"karpenter.k8s.aws/placement-group-id", "karpenter.k8s.aws/placement-group-partition",
		"karpenter.k8s.aws/capacity-reservation-id", "karpenter.k8s.aws/capacity-reservation-type",
		"karpenter.sh/nodepool", "karpenter.k8s.aws/ec2nodeclass", "kubernetes.io/hostname", "team",
		"beta.kubernetes.io/arch", // normalize first
	} {
		if Computable(k) {
			t.Errorf("%s is computable", k)
		}
	}
	if NormalizeKey("beta.kubernetes.io/arch") != LabelArch || NormalizeKey("team") != "team" {
		t.Error("NormalizeKey")
	}
}

func TestAdmittedValues(t *testing.T) {
	archs := []string{"amd64", "arm64"}
	for _, c := range []struct {
		reqs []Requirement
		want []string
	}{
		{nil, archs},
		{[]Requirement{req(LabelArch, OpIn, "arm64")}, []string{"arm64"}},
		{[]Requirement{req(LabelArch, OpNotIn, "arm64", "amd64")}, nil},
		{[]Requirement{req(LabelArch, OpIn, "arm64"), req(LabelArch, OpIn, "amd64")}, nil},
		{[]Requirement{req(LabelArch, OpExists)}, archs},
		{[]Requirement{req(LabelArch, OpDoesNotExist)}, nil},
		{[]Requirement{req(LabelArch, "Bogus", "x"), req(LabelOS, OpIn, "windows")}, archs}, // not judged; another key
	} {
		if got := AdmittedValues(c.reqs, LabelArch, archs); !slices.Equal(got, c.want) {
			t.Errorf("%+v: got %v, want %v", c.reqs, got, c.want)
		}
	}
}

func TestAdmittedZones(t *testing.T) {
	env := usEast1()
	env.Zones[4].ID = "" // us-east-1f: zone-ID requirements cannot judge it
	names := func(zs []Zone) []string {
		var out []string
		for _, z := range zs {
			out = append(out, z.Name)
		}
		return out
	}
	for _, c := range []struct {
		reqs []Requirement
		want []string
	}{
		{nil, []string{"us-east-1a", "us-east-1b", "us-east-1c", "us-east-1d", "us-east-1f"}},
		{[]Requirement{req(LabelZone, OpIn, "us-east-1b", "us-west-2a")}, []string{"us-east-1b"}},
		{[]Requirement{req(LabelZone, OpIn, "us-west-2a")}, nil},
		{[]Requirement{req(LabelZone, OpNotIn, "us-east-1a", "us-east-1b")}, []string{"us-east-1c", "us-east-1d", "us-east-1f"}},
		{[]Requirement{req(LabelZoneID, OpIn, "use1-az6")}, []string{"us-east-1c", "us-east-1f"}},
		{[]Requirement{req(LabelZoneID, OpIn, "use1-az6"), req(LabelZone, OpIn, "us-east-1a")}, nil},
		{[]Requirement{req(LabelZone, OpDoesNotExist)}, nil},
	} {
		if got := names(AdmittedZones(c.reqs, env)); !slices.Equal(got, c.want) {
			t.Errorf("%+v: got %v, want %v", c.reqs, got, c.want)
		}
	}
}
