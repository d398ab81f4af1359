package scheduling

import (
	"flag"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/internal/golden"
)

var update = flag.Bool("update", false, "rewrite the golden files of validators/scheduling/testdata")

// undef marks a label the type does not have.
var undef []string

func TestLabels(t *testing.T) {
	types := loadTypes(t, fixtureTypes)
	al2023 := usEast1()
	windows := usEast1()
	windows.AMIFamily, windows.Architectures = "Windows2022", []string{"amd64"}
	windows2019, windows2025 := windows, windows
	windows2019.AMIFamily, windows2025.AMIFamily = "Windows2019", "Windows2025"
	bottlerocket := usEast1()
	bottlerocket.AMIFamily = "Bottlerocket"
	twoZones := usEast1()
	twoZones.Zones = []Zone{{"us-east-1b", "use1-az4"}, {"us-east-1e", "use1-az3"}}
	noIDs := usEast1()
	noIDs.Zones[2].ID = ""
	noRegion := usEast1()
	noRegion.Region = ""
	reserved := usEast1()
	reserved.Reservations = map[string][]string{"p5.48xlarge": {"us-east-1a"}, "m5.large": {"us-east-1e"}}

	for _, c := range []struct {
		typ, label string
		env        Env
		want       []string
	}{
		{"m5.large", LabelInstanceType, al2023, []string{"m5.large"}},
		{"m7g.large", LabelInstanceType, al2023, []string{"m7g.large"}},

		{"m5.large", LabelArch, al2023, []string{"amd64"}},
		{"m7g.large", LabelArch, al2023, []string{"arm64"}},
		{"t2.micro", LabelArch, al2023, []string{"amd64"}}, // [i386, x86_64]: the first Karpenter recognizes

		{"m5.large", LabelOS, al2023, []string{"linux"}},
		{"m5.large", LabelOS, bottlerocket, []string{"linux"}},
		{"m5.large", LabelOS, windows, []string{"windows"}},
		{"m7g.large", LabelOS, windows, undef},

		{"m5.large", LabelWindowsBuild, al2023, undef},
		{"m5.large", LabelWindowsBuild, windows2019, []string{"10.0.17763"}},
		{"m5.large", LabelWindowsBuild, windows, []string{"10.0.20348"}},
		{"m5.large", LabelWindowsBuild, windows2025, []string{"10.0.26100"}},

		{"m5.large", LabelZone, al2023, []string{"us-east-1a", "us-east-1b", "us-east-1c", "us-east-1d", "us-east-1f"}},
		{"a1.large", LabelZone, al2023, []string{"us-east-1a", "us-east-1b", "us-east-1c"}},
		{"m5.large", LabelZone, twoZones, []string{"us-east-1b"}}, // us-east-1e does not offer m5
		{"m4.large", LabelZone, twoZones, []string{"us-east-1b", "us-east-1e"}},
		{"trn1.2xlarge", LabelZone, twoZones, undef},
		{"dl2q.24xlarge", LabelZone, al2023, undef}, // not offered in us-east-1

		{"a1.large", LabelZoneID, al2023, []string{"use1-az2", "use1-az4", "use1-az6"}},
		{"m4.large", LabelZoneID, twoZones, []string{"use1-az4", "use1-az3"}},
		{"m5.large", LabelZoneID, noIDs, undef},

		{"m5.large", LabelRegion, al2023, []string{"us-east-1"}},
		{"m5.large", LabelRegion, noRegion, undef},

		{"m5.large", LabelCapacityType, al2023, []string{"on-demand", "spot"}},
		{"t2.nano", LabelCapacityType, al2023, []string{"on-demand"}},
		{"p5.48xlarge", LabelCapacityType, al2023, []string{"on-demand", "spot"}}, // capacity-block is not one
		{"p5.48xlarge", LabelCapacityType, reserved, []string{"on-demand", "spot", "reserved"}},
		{"m5.large", LabelCapacityType, reserved, []string{"on-demand", "spot"}}, // us-east-1e is no subnet zone
		{"m5.xlarge", LabelCapacityType, reserved, []string{"on-demand", "spot"}},

		{"m5.large", LabelCPU, al2023, []string{"2"}},
		{"p5.48xlarge", LabelCPU, al2023, []string{"192"}},
		{"m5.large", LabelMemory, al2023, []string{"8192"}},
		{"u-6tb1.112xlarge", LabelMemory, al2023, []string{"6291456"}},

		{"m5.large", LabelCPUManufacturer, al2023, []string{"intel"}},
		{"m7g.large", LabelCPUManufacturer, al2023, []string{"aws"}},
		{"g4ad.xlarge", LabelCPUManufacturer, al2023, []string{"amd"}},

		{"m5.large", LabelCPUSustainedClockSpeed, al2023, []string{"3100"}},
		{"m7g.large", LabelCPUSustainedClockSpeed, al2023, []string{"2600"}},
		{"c1.medium", LabelCPUSustainedClockSpeed, al2023, undef}, // DescribeInstanceTypes gives none

		{"m7g.large", LabelCategory, al2023, []string{"m"}},
		{"x2iedn.xlarge", LabelCategory, al2023, []string{"x"}},
		{"hpc7g.4xlarge", LabelCategory, al2023, []string{"hpc"}},
		{"u-6tb1.112xlarge", LabelCategory, al2023, []string{"u"}},
		{"u7i-6tb.112xlarge", LabelCategory, al2023, []string{"u"}},
		{"p6-b200.48xlarge", LabelCategory, al2023, []string{"p"}},
		{"m7g.large", LabelGeneration, al2023, []string{"7"}},
		{"u-6tb1.112xlarge", LabelGeneration, al2023, []string{"1"}},
		{"u7i-6tb.112xlarge", LabelGeneration, al2023, []string{"7"}},
		{"c7i-flex.large", LabelGeneration, al2023, []string{"7"}},
		{"p6-b200.48xlarge", LabelGeneration, al2023, []string{"6"}},

		{"c7i-flex.large", LabelFamily, al2023, []string{"c7i-flex"}},
		{"u-6tb1.112xlarge", LabelFamily, al2023, []string{"u-6tb1"}},
		{"m5.metal", LabelSize, al2023, []string{"metal"}},
		{"p5.48xlarge", LabelSize, al2023, []string{"48xlarge"}},

		{"c7i-flex.large", LabelCapabilityFlex, al2023, []string{"true"}},
		{"m7i-flex.large", LabelCapabilityFlex, al2023, []string{"true"}},
		{"m5.large", LabelCapabilityFlex, al2023, []string{"false"}},

		{"m5.large", LabelHypervisor, al2023, []string{"nitro"}},
		{"m4.large", LabelHypervisor, al2023, []string{"xen"}},
		{"t2.micro", LabelHypervisor, al2023, []string{"xen"}},
		{"m5.metal", LabelHypervisor, al2023, []string{""}}, // bare metal: defined and empty

		{"m7g.large", LabelEncryptionInTransit, al2023, []string{"true"}},
		{"m5.large", LabelEncryptionInTransit, al2023, []string{"false"}},

		{"m5d.large", LabelLocalNVMe, al2023, []string{"75"}},
		{"i4i.large", LabelLocalNVMe, al2023, []string{"468"}},
		{"m5.large", LabelLocalNVMe, al2023, undef},

		{"m5.large", LabelEBSBandwidth, al2023, []string{"4750"}},
		{"t2.micro", LabelEBSBandwidth, al2023, undef}, // EbsOptimizedSupport unsupported

		{"g4dn.xlarge", LabelGPUName, al2023, []string{"t4"}},
		{"g4ad.xlarge", LabelGPUName, al2023, []string{"radeon-pro-v520"}},
		{"p5.48xlarge", LabelGPUName, al2023, []string{"h100"}},
		{"m5.large", LabelGPUName, al2023, undef},
		{"g4dn.xlarge", LabelGPUManufacturer, al2023, []string{"nvidia"}},
		{"g4ad.xlarge", LabelGPUManufacturer, al2023, []string{"amd"}},
		{"g4dn.xlarge", LabelGPUCount, al2023, []string{"1"}},
		{"p5.48xlarge", LabelGPUCount, al2023, []string{"8"}},
		{"m5.large", LabelGPUCount, al2023, undef},
		{"g4dn.xlarge", LabelGPUMemory, al2023, []string{"16384"}},
		{"p5.48xlarge", LabelGPUMemory, al2023, []string{"81920"}},
		{"g6f.large", LabelGPUName, al2023, []string{"l4"}},
		{"g6f.large", LabelGPUCount, al2023, []string{"0"}}, // an eighth of an L4: the entry's count is 0
		{"g6f.large", LabelGPUMemory, al2023, []string{"2861"}},

		{"inf2.xlarge", LabelAcceleratorName, al2023, []string{"inferentia2"}},
		{"inf1.xlarge", LabelAcceleratorName, al2023, []string{"inferentia"}}, // Neuron device wins over the accelerator
		{"trn1.2xlarge", LabelAcceleratorName, al2023, []string{"trainium"}},
		{"dl2q.24xlarge", LabelAcceleratorName, al2023, []string{"qualcomm-ai100"}},
		{"g4dn.xlarge", LabelAcceleratorName, al2023, undef},
		{"inf2.xlarge", LabelAcceleratorManufacturer, al2023, []string{"aws"}},
		{"dl2q.24xlarge", LabelAcceleratorManufacturer, al2023, []string{"qualcomm"}},
		{"inf2.xlarge", LabelAcceleratorCount, al2023, []string{"1"}},
		{"dl2q.24xlarge", LabelAcceleratorCount, al2023, []string{"8"}},
		{"m5.large", LabelAcceleratorCount, al2023, undef},

		{"m5.large", LabelTenancy, al2023, []string{"default", "dedicated"}},
	} {
		got, _ := Labels(byName(t, types, c.typ), c.env)
		if !slices.Equal(got[c.label], c.want) {
			t.Errorf("%s %s: got %q, want %q", c.typ, c.label, got[c.label], c.want)
		}
	}
}

func TestLabelsSyntheticFields(t *testing.T) {
	// Fields no real type of the fixture leaves unset: the facts' zero value is "not set".
	bare := facts.InstanceType{
		InstanceType: "x9.large", SupportedArchitectures: []string{"x86_64"}, SupportedUsageClasses: []string{"spot"},
		Zones: []string{"us-east-1a"}, GPUs: []facts.Accelerator{{Name: "A", Count: 1}, {Name: "B", Count: 1}},
		InferenceAccelerators: []facts.Accelerator{{Name: "Accel X", Manufacturer: "Acme", Count: 2}},
	}
	got, why := Labels(&bare, usEast1())
	if why != Usable {
		t.Fatalf("unusable: %s", why)
	}
	for _, k := range []string{LabelCPU, LabelMemory, LabelCPUManufacturer, LabelCPUSustainedClockSpeed, LabelEncryptionInTransit, LabelGPUName, LabelGPUCount, LabelLocalNVMe, LabelEBSBandwidth} {
		if v, ok := got[k]; ok {
			t.Errorf("%s: got %q, want undefined", k, v)
		}
	}
	if got[LabelHypervisor][0] != "" || got[LabelAcceleratorName][0] != "accel-x" || got[LabelAcceleratorManufacturer][0] != "acme" {
		t.Errorf("got %q %q %q", got[LabelHypervisor], got[LabelAcceleratorName], got[LabelAcceleratorManufacturer])
	}
	// The one device's labels are defined whatever its fields hold, as Karpenter writes them.
	oneGPU := bare
	oneGPU.GPUs = []facts.Accelerator{{Name: "X 1"}}
	got, _ = Labels(&oneGPU, usEast1())
	for k, want := range map[string]string{LabelGPUName: "x-1", LabelGPUManufacturer: "", LabelGPUCount: "0", LabelGPUMemory: "0"} {
		if v := got[k]; len(v) != 1 || v[0] != want {
			t.Errorf("%s of one GPU: got %q, want %q", k, v, want)
		}
	}
	noDot := facts.InstanceType{InstanceType: "m5", SupportedArchitectures: []string{"x86_64"}}
	got, _ = Labels(&noDot, usEast1())
	for _, k := range []string{LabelCategory, LabelGeneration, LabelFamily, LabelSize} {
		if v, ok := got[k]; ok {
			t.Errorf("%s of m5: got %q, want undefined", k, v)
		}
	}
	if got[LabelCapabilityFlex][0] != "false" {
		t.Errorf("flex of m5: %q", got[LabelCapabilityFlex])
	}
}

func TestUsable(t *testing.T) {
	types := loadTypes(t, fixtureTypes)
	amd64 := usEast1()
	amd64.Architectures = []string{"amd64"}
	al2 := usEast1()
	al2.AMIFamily = "AL2"
	windows := usEast1()
	windows.AMIFamily = "Windows2022" // a class with arm64 AMIs under Windows cannot launch arm64 either
	onlyE := usEast1()
	onlyE.Zones = []Zone{{"us-east-1e", "use1-az3"}}
	blockOnly := *byName(t, types, "p5.48xlarge")
	blockOnly.SupportedUsageClasses = []string{"capacity-block"}
	reservedBlock := usEast1()
	reservedBlock.Reservations = map[string][]string{"p5.48xlarge": {"us-east-1b"}}

	for _, c := range []struct {
		typ  *facts.InstanceType
		env  Env
		want Unusable
	}{
		{byName(t, types, "m5.large"), usEast1(), Usable},
		{byName(t, types, "m7g.large"), amd64, UnusableArchitecture},
		{byName(t, types, "a1.large"), usEast1(), UnusableAMIFamily},
		{byName(t, types, "a1.metal"), usEast1(), UnusableAMIFamily},
		{byName(t, types, "a1.large"), al2, Usable},
		{byName(t, types, "m7g.large"), windows, UnusableAMIFamily},
		{byName(t, types, "m5.large"), windows, Usable},
		{byName(t, types, "m5.large"), onlyE, UnusableZones},
		{byName(t, types, "m4.large"), onlyE, Usable},
		{byName(t, types, "dl2q.24xlarge"), usEast1(), UnusableZones},
		{&blockOnly, usEast1(), UnusableCapacityTypes},
		{&blockOnly, reservedBlock, Usable},
		{&facts.InstanceType{InstanceType: "mac2.metal", SupportedArchitectures: []string{"arm64_mac"}, Zones: []string{"us-east-1a"}}, usEast1(), UnusableArchitecture},
	} {
		if _, got := Labels(c.typ, c.env); got != c.want {
			t.Errorf("%s in %s %v: got %q, want %q", c.typ.InstanceType, c.env.AMIFamily, c.env.Architectures, got, c.want)
		}
	}
}

// TestLabelsGolden records every label of every fixture type in two classes.
func TestLabelsGolden(t *testing.T) {
	types := loadTypes(t, fixtureTypes)
	windows := usEast1()
	windows.AMIFamily, windows.Architectures = "Windows2022", []string{"amd64"}
	reserved := usEast1()
	reserved.Reservations = map[string][]string{"p5.48xlarge": {"us-east-1a"}}
	var b strings.Builder
	for _, env := range []struct {
		name string
		env  Env
	}{{"AL2023 amd64+arm64, us-east-1 a-d and f, a p5.48xlarge reservation in us-east-1a", reserved}, {"Windows2022 amd64", windows}} {
		fmt.Fprintf(&b, "# %s\n", env.name)
		for i := range types {
			labels, why := Labels(&types[i], env.env)
			fmt.Fprintf(&b, "%s:", types[i].InstanceType)
			if why != Usable {
				fmt.Fprintf(&b, " (unusable: %s)", why)
			}
			b.WriteString("\n")
			keys := make([]string, 0, len(labels))
			for k := range labels {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				fmt.Fprintf(&b, "  %s: %q\n", k, labels[k])
			}
		}
	}
	golden.Compare(t, "testdata/labels.golden", b.String(), *update)
}

// TestCategoryGenerationMatchesKarpenter checks the hand-written matcher against Karpenter's pattern on
// every name of the region and on names built to exercise the pattern's corners.
func TestCategoryGenerationMatchesKarpenter(t *testing.T) {
	scheme := regexp.MustCompile(`(^[a-z]+)(\-[0-9]+tb)?([0-9]+).*\.`)
	names := []string{"", ".", "m", "m5", "m5.", "5.large", "M5.large", "m.large", "m-6tb.x", "m-6tb1.x", "u-6tb1",
		"u-tb1.x", "u-6t1.x", "u-6tbx.x", "mac2-m2pro.metal", "a1..b", "m5-flex.large.x", "u-12tb12.x"}
	for _, ty := range loadTypes(t, fixtureRegion) {
		names = append(names, ty.InstanceType)
	}
	for _, name := range names {
		var wantCat, wantGen string
		m := scheme.FindStringSubmatch(name)
		if len(m) == 4 {
			wantCat, wantGen = m[1], m[3]
		}
		cat, gen, ok := categoryGeneration(name)
		if cat != wantCat || gen != wantGen || ok != (len(m) == 4) {
			t.Errorf("%q: got %q %q %v, want %q %q", name, cat, gen, ok, wantCat, wantGen)
		}
	}
}

func TestKebabEqual(t *testing.T) {
	for _, raw := range []string{"", "NVIDIA", "Radeon Pro V520", "Qualcomm AI100", "aws", "ÀB C", "İx"} {
		want := kebabCase(raw)
		for _, other := range []string{want, want + "x", strings.ToUpper(want), "", "nvidia"} {
			if got := kebabEqual(raw, other); got != (want == other) {
				t.Errorf("kebabEqual(%q, %q) = %v, kebabCase gives %q", raw, other, got, want)
			}
		}
	}
}
