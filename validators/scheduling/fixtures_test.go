package scheduling

import (
	"os"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/facts"
)

// The fixtures are real DescribeInstanceTypes answers (their headers say where from and how they were
// converted): instance-types.yaml a few dozen types chosen to exercise every label,
// instance-types-region.yaml every type Karpenter lists in us-east-1, for benchmarks.
const (
	fixtureTypes  = "testdata/instance-types.yaml"
	fixtureRegion = "testdata/instance-types-region.yaml"
)

// loadTypes decodes a fixture through the snapshot decoder, so that it is also checked to be a valid
// ClusterFacts document.
func loadTypes(tb testing.TB, path string) []facts.InstanceType {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	cf, err := facts.DecodeSnapshotFile(data)
	if err != nil {
		tb.Fatalf("decode %s: %v", path, err)
	}
	if cf.InstanceTypes == nil {
		tb.Fatalf("%s has no instanceTypes", path)
	}
	return *cf.InstanceTypes
}

// byName returns the fixture type named name.
func byName(tb testing.TB, types []facts.InstanceType, name string) *facts.InstanceType {
	tb.Helper()
	for i := range types {
		if types[i].InstanceType == name {
			return &types[i]
		}
	}
	tb.Fatalf("no instance type %s in the fixture", name)
	return nil
}

// usEast1 is an EC2NodeClass with subnets in five us-east-1 zones, AL2023 AMIs for both architectures.
// The zone IDs are those moto's availability-zone-id offerings give the same zones (matched by the set
// of types each offers).
func usEast1() Env {
	return Env{
		Region:        "us-east-1",
		Architectures: []string{"amd64", "arm64"},
		AMIFamily:     "AL2023",
		Zones: []Zone{
			{"us-east-1a", "use1-az2"}, {"us-east-1b", "use1-az4"}, {"us-east-1c", "use1-az6"},
			{"us-east-1d", "use1-az1"}, {"us-east-1f", "use1-az5"},
		},
	}
}
