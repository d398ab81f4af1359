// Command fixturegen converts DescribeInstanceTypes and DescribeInstanceTypeOfferings answers stored
// as JSON (moto's moto/ec2/resources/instance_types.json and
// instance_type_offerings/availability-zone/<region>.json) into a ClusterFacts document whose
// instanceTypes section holds the types Karpenter would list (hvm, x86_64 or arm64) that the region
// offers. It writes the fixtures of validators/scheduling/testdata once; the tests only read them.
//
//	go run ./validators/scheduling/internal/fixturegen -types moto/ec2/resources/instance_types.json \
//	  -offerings moto/ec2/resources/instance_type_offerings/availability-zone/us-east-1.json \
//	  -source "getmoto/moto at <commit>" [-only m5.large,m7g.large] [-flow] -o out.yaml
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	yaml "go.yaml.in/yaml/v3"

	"github.com/karpenter-guard/karpenter-guard/facts"
)

func main() {
	typesPath := flag.String("types", "", "JSON object of DescribeInstanceTypes answers keyed by instance type")
	offeringsPath := flag.String("offerings", "", "JSON list of DescribeInstanceTypeOfferings answers (LocationType availability-zone)")
	source := flag.String("source", "", "where the JSON came from, for the header (repository, commit, paths; \"; \" starts a new line)")
	only := flag.String("only", "", "comma-separated instance types to keep (default: every type the region offers)")
	flow := flag.Bool("flow", false, "write one line per instance type")
	out := flag.String("o", "", "output file")
	flag.Parse()
	if err := run(*typesPath, *offeringsPath, *source, *only, *flow, *out); err != nil {
		fmt.Fprintln(os.Stderr, "fixturegen:", err)
		os.Exit(1)
	}
}

func run(typesPath, offeringsPath, source, only string, flow bool, out string) error {
	if typesPath == "" || offeringsPath == "" || source == "" || out == "" {
		return fmt.Errorf("-types, -offerings, -source and -o are required")
	}
	var infos map[string]ec2types.InstanceTypeInfo
	if err := readJSON(typesPath, &infos); err != nil {
		return err
	}
	var offerings []ec2types.InstanceTypeOffering
	if err := readJSON(offeringsPath, &offerings); err != nil {
		return err
	}
	zones := map[string][]string{}
	for _, o := range offerings {
		zones[string(o.InstanceType)] = append(zones[string(o.InstanceType)], *o.Location)
	}
	var names []string
	if only != "" {
		names = strings.Split(only, ",")
	} else {
		for name := range zones {
			if info, ok := infos[name]; ok && karpenterLists(info) {
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	types := make([]facts.InstanceType, 0, len(names))
	for _, name := range names {
		info, ok := infos[name]
		if !ok {
			return fmt.Errorf("instance type %s: not in %s", name, typesPath)
		}
		if !karpenterLists(info) {
			return fmt.Errorf("instance type %s: Karpenter does not list it (not hvm, or neither x86_64 nor arm64)", name)
		}
		types = append(types, convert(info, zones[name]))
	}
	doc, err := render(types, flow)
	if err != nil {
		return err
	}
	header := fmt.Sprintf("# %d instance types, real DescribeInstanceTypes and DescribeInstanceTypeOfferings answers.\n"+
		"# Source: %s\n"+
		"# Converted by validators/scheduling/internal/fixturegen into the instanceTypes section of a\n"+
		"# ClusterFacts snapshot; generated once, do not edit by hand.\n",
		len(types), strings.ReplaceAll(source, "; ", "\n#   "))
	return os.WriteFile(out, append([]byte(header), doc...), 0o644)
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("decode %s: %w", path, err)
	}
	return nil
}

// karpenterLists reports whether Karpenter's DescribeInstanceTypes filters keep the type:
// supported-virtualization-type hvm and processor-info.supported-architecture x86_64 or arm64.
func karpenterLists(info ec2types.InstanceTypeInfo) bool {
	if !slices.Contains(info.SupportedVirtualizationTypes, ec2types.VirtualizationTypeHvm) || info.ProcessorInfo == nil {
		return false
	}
	return slices.ContainsFunc(info.ProcessorInfo.SupportedArchitectures, func(a ec2types.ArchitectureType) bool {
		return a == ec2types.ArchitectureTypeX8664 || a == ec2types.ArchitectureTypeArm64
	})
}

// convert keeps the DescribeInstanceTypes fields Karpenter computes labels from, as the facts hold
// them: 0 and "" for a field that is not set (or, for NVMe and EBS bandwidth, does not apply).
func convert(info ec2types.InstanceTypeInfo, zones []string) facts.InstanceType {
	t := facts.InstanceType{
		InstanceType: string(info.InstanceType),
		Hypervisor:   string(info.Hypervisor),
		Zones:        slices.Sorted(slices.Values(zones)),
	}
	for _, u := range info.SupportedUsageClasses {
		t.SupportedUsageClasses = append(t.SupportedUsageClasses, string(u))
	}
	if p := info.ProcessorInfo; p != nil {
		for _, a := range p.SupportedArchitectures {
			t.SupportedArchitectures = append(t.SupportedArchitectures, string(a))
		}
		t.ProcessorManufacturer = deref(p.Manufacturer)
		if p.SustainedClockSpeedInGhz != nil {
			t.SustainedClockSpeedInMhz = int(math.Round(*p.SustainedClockSpeedInGhz * 1000))
		}
	}
	if info.VCpuInfo != nil {
		t.DefaultVCPUs = int(deref(info.VCpuInfo.DefaultVCpus))
	}
	if info.MemoryInfo != nil {
		t.MemorySizeInMiB = int(deref(info.MemoryInfo.SizeInMiB))
	}
	if info.NetworkInfo != nil {
		t.EncryptionInTransitSupported = info.NetworkInfo.EncryptionInTransitSupported
	}
	if s := info.InstanceStorageInfo; s != nil && s.NvmeSupport != ec2types.EphemeralNvmeSupportUnsupported {
		t.NVMeTotalSizeInGB = int(deref(s.TotalSizeInGB))
	}
	if e := info.EbsInfo; e != nil && e.EbsOptimizedInfo != nil && e.EbsOptimizedSupport == ec2types.EbsOptimizedSupportDefault {
		t.EBSMaximumBandwidthInMbps = int(deref(e.EbsOptimizedInfo.MaximumBandwidthInMbps))
	}
	if info.GpuInfo != nil {
		for _, g := range info.GpuInfo.Gpus {
			a := facts.Accelerator{Name: deref(g.Name), Manufacturer: deref(g.Manufacturer), Count: int(deref(g.Count))}
			if g.MemoryInfo != nil {
				a.MemorySizeInMiB = int(deref(g.MemoryInfo.SizeInMiB))
			}
			t.GPUs = append(t.GPUs, a)
		}
	}
	if info.InferenceAcceleratorInfo != nil {
		for _, g := range info.InferenceAcceleratorInfo.Accelerators {
			a := facts.Accelerator{Name: deref(g.Name), Manufacturer: deref(g.Manufacturer), Count: int(deref(g.Count))}
			if g.MemoryInfo != nil {
				a.MemorySizeInMiB = int(deref(g.MemoryInfo.SizeInMiB))
			}
			t.InferenceAccelerators = append(t.InferenceAccelerators, a)
		}
	}
	if info.NeuronInfo != nil {
		for _, d := range info.NeuronInfo.NeuronDevices {
			t.NeuronDevices = append(t.NeuronDevices, facts.NeuronDevice{Name: deref(d.Name), Count: int(deref(d.Count))})
		}
	}
	return t
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// render writes the ClusterFacts document: lists in flow style, and with flow each type on one line.
func render(types []facts.InstanceType, flow bool) ([]byte, error) {
	var list yaml.Node
	if err := list.Encode(types); err != nil {
		return nil, fmt.Errorf("encode instance types: %w", err)
	}
	for _, item := range list.Content {
		if flow {
			item.Style = yaml.FlowStyle
		}
		for _, v := range item.Content {
			if v.Kind == yaml.SequenceNode {
				v.Style = yaml.FlowStyle
			}
		}
	}
	doc := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
		scalar("apiVersion"), scalar(facts.SnapshotAPIVersion),
		scalar("kind"), scalar(facts.SnapshotKind),
		scalar("instanceTypes"), &list,
	}}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("write YAML: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("write YAML: %w", err)
	}
	return buf.Bytes(), nil
}

func scalar(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: s} }
