package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/karpenter-guard/karpenter-guard/facts"
)

// Two DescribeInstanceTypes answers as moto stores them, trimmed to the fields the conversion reads
// and a few it ignores: an NVMe and GPU type, and a xen type with a hard disk and no EBS optimization.
const answers = `{
 "g4dn.xlarge": {"InstanceType": "g4dn.xlarge", "SupportedUsageClasses": ["on-demand", "spot"], "SupportedVirtualizationTypes": ["hvm"], "Hypervisor": "nitro", "ProcessorInfo": {"Manufacturer": "Intel", "SupportedArchitectures": ["x86_64"], "SustainedClockSpeedInGhz": 2.5}, "VCpuInfo": {"DefaultVCpus": 4}, "MemoryInfo": {"SizeInMiB": 16384}, "InstanceStorageInfo": {"Disks": [{"Count": 1, "SizeInGB": 125, "Type": "ssd"}], "EncryptionSupport": "required", "NvmeSupport": "required", "TotalSizeInGB": 125}, "EbsInfo": {"AttachmentLimitType": "shared", "EbsOptimizedInfo": {"BaselineBandwidthInMbps": 950, "BaselineIops": 3000, "BaselineThroughputInMBps": 118.75, "MaximumBandwidthInMbps": 3500, "MaximumIops": 20000, "MaximumThroughputInMBps": 437.5}, "EbsOptimizedSupport": "default", "EncryptionSupport": "supported", "MaximumEbsAttachments": 25, "NvmeSupport": "required"}, "GpuInfo": {"Gpus": [{"Count": 1, "GpuPartitionSize": 1.0, "LogicalGpuCount": 1, "Manufacturer": "NVIDIA", "MemoryInfo": {"SizeInMiB": 16384}, "Name": "T4", "Workloads": ["ml-ai", "graphics"]}], "TotalGpuMemoryInMiB": 16384}, "NetworkInfo": {"EncryptionInTransitSupported": true}},
 "c1.medium": {"InstanceType": "c1.medium", "SupportedUsageClasses": ["on-demand", "spot"], "SupportedVirtualizationTypes": ["hvm", "paravirtual"], "Hypervisor": "xen", "ProcessorInfo": {"Manufacturer": "Intel", "SupportedArchitectures": ["i386", "x86_64"]}, "VCpuInfo": {"DefaultVCpus": 2}, "MemoryInfo": {"SizeInMiB": 1740}, "InstanceStorageInfo": {"Disks": [{"Count": 1, "SizeInGB": 350, "Type": "hdd"}], "EncryptionSupport": "unsupported", "NvmeSupport": "unsupported", "TotalSizeInGB": 350}, "EbsInfo": {"AttachmentLimitType": "shared", "EbsOptimizedSupport": "unsupported", "EncryptionSupport": "supported", "MaximumEbsAttachments": 39, "NvmeSupport": "unsupported"}, "NetworkInfo": {"EncryptionInTransitSupported": false}},
 "mac2.metal": {"InstanceType": "mac2.metal", "SupportedUsageClasses": ["on-demand"], "SupportedVirtualizationTypes": ["hvm"], "ProcessorInfo": {"Manufacturer": "Apple", "SupportedArchitectures": ["arm64_mac"]}}
}`

func TestConvert(t *testing.T) {
	var infos map[string]ec2types.InstanceTypeInfo
	if err := json.Unmarshal([]byte(answers), &infos); err != nil {
		t.Fatal(err)
	}
	yes, no := true, false
	for name, want := range map[string]facts.InstanceType{
		"g4dn.xlarge": {
			InstanceType: "g4dn.xlarge", SupportedArchitectures: []string{"x86_64"}, SupportedUsageClasses: []string{"on-demand", "spot"},
			Hypervisor: "nitro", DefaultVCPUs: 4, MemorySizeInMiB: 16384, ProcessorManufacturer: "Intel", SustainedClockSpeedInMhz: 2500,
			EncryptionInTransitSupported: &yes, NVMeTotalSizeInGB: 125, EBSMaximumBandwidthInMbps: 3500,
			GPUs:  []facts.Accelerator{{Name: "T4", Manufacturer: "NVIDIA", Count: 1, MemorySizeInMiB: 16384}},
			Zones: []string{"us-east-1a", "us-east-1b"},
		},
		"c1.medium": {
			InstanceType: "c1.medium", SupportedArchitectures: []string{"i386", "x86_64"}, SupportedUsageClasses: []string{"on-demand", "spot"},
			Hypervisor: "xen", DefaultVCPUs: 2, MemorySizeInMiB: 1740, ProcessorManufacturer: "Intel", EncryptionInTransitSupported: &no,
			Zones: []string{"us-east-1a", "us-east-1b"},
		},
	} {
		if got := convert(infos[name], []string{"us-east-1b", "us-east-1a"}); !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\ngot  %+v\nwant %+v", name, got, want)
		}
		if !karpenterLists(infos[name]) {
			t.Errorf("%s: Karpenter lists it", name)
		}
	}
	if karpenterLists(infos["mac2.metal"]) {
		t.Error("mac2.metal (arm64_mac): Karpenter does not list it")
	}
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	types, offerings, out := filepath.Join(dir, "types.json"), filepath.Join(dir, "offerings.json"), filepath.Join(dir, "out.yaml")
	if err := os.WriteFile(types, []byte(answers), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(offerings, []byte(`[{"InstanceType": "c1.medium", "Location": "us-east-1a"}, {"InstanceType": "mac2.metal", "Location": "us-east-1a"},
		{"InstanceType": "g4dn.xlarge", "Location": "us-east-1b"}, {"InstanceType": "g4dn.xlarge", "Location": "us-east-1a"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(types, offerings, "repository r, commit c; path p", "", true, out); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := facts.DecodeSnapshotFile(data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if !strings.HasPrefix(string(data), "# 2 instance types") || !strings.Contains(string(data), "# Source: repository r, commit c\n#   path p\n") ||
		len(*cf.InstanceTypes) != 2 || (*cf.InstanceTypes)[0].InstanceType != "c1.medium" || len((*cf.InstanceTypes)[1].Zones) != 2 {
		t.Errorf("output:\n%s", data)
	}
	if err := run(types, offerings, "s", "mac2.metal", false, out); err == nil || !strings.Contains(err.Error(), "Karpenter does not list it") {
		t.Errorf("mac2.metal: %v", err)
	}
}
