package scheduling

import (
	"fmt"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/facts"
)

// regionEnv is a class with subnets in all six us-east-1 zones (zone IDs as moto's
// availability-zone-id offerings give them) and AL2023 AMIs for both architectures.
func regionEnv() Env {
	env := usEast1()
	env.Zones = append(env.Zones, Zone{"us-east-1e", "use1-az3"})
	return env
}

// benchRequirements is a typical NodePool: both architectures, spot and on-demand, the c, m and r
// categories from generation 6, up to 32 vCPUs, three zones, at least five families.
func benchRequirements() []Requirement {
	return []Requirement{
		req(LabelArch, OpIn, "amd64", "arm64"),
		req(LabelCapacityType, OpIn, "spot", "on-demand"),
		req(LabelCategory, OpIn, "c", "m", "r"),
		req(LabelGeneration, OpGt, "5"),
		req(LabelCPU, OpLte, "32"),
		req(LabelZone, OpIn, "us-east-1a", "us-east-1b", "us-east-1c"),
		req(LabelHypervisor, OpIn, "nitro"),
		withMin(req(LabelFamily, OpExists), 5),
		req("karpenter.sh/nodepool", OpIn, "default"),
	}
}

// BenchmarkFilter is one NodePool's requirements over every instance type Karpenter lists in
// us-east-1 (1,345 types, six zones), and over 800 of them taken evenly: what
// nodepool-requirements-unsatisfiable costs per pool. AllRules adds what the zone and AMI rules ask.
func BenchmarkFilter(b *testing.B) {
	region := loadTypes(b, fixtureRegion)
	sample := make([]facts.InstanceType, 800)
	for i := range sample {
		sample[i] = region[i*len(region)/len(sample)]
	}
	env := regionEnv()
	reqs := benchRequirements()
	for _, types := range [][]facts.InstanceType{region, sample} {
		b.Run(fmt.Sprintf("Filter/%dtypes", len(types)), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if res := Filter(types, env, reqs); len(res.Types) == 0 {
					b.Fatal("no types")
				}
			}
		})
		b.Run(fmt.Sprintf("AllRules/%dtypes", len(types)), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if len(AdmittedZones(reqs, env)) == 0 || len(AdmittedValues(reqs, LabelArch, []string{"amd64", "arm64"})) == 0 ||
					len(AdmittedValues(reqs, LabelOS, []string{"linux"})) == 0 || len(Filter(types, env, reqs).Types) == 0 {
					b.Fatal("nothing admitted")
				}
			}
		})
	}
}
