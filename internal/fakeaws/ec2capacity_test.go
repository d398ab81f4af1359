package fakeaws_test

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// capacity is a snapshot of instance types and capacity reservations.
const capacity = header + `cluster: {name: prod-eks, region: us-east-1, accountID: "111122223333"}
instanceTypes:
  - {instanceType: m7g.large, supportedArchitectures: [arm64], supportedUsageClasses: [on-demand, spot], hypervisor: nitro, defaultVCpus: 2,
     memorySizeInMiB: 8192, processorManufacturer: AWS, sustainedClockSpeedInMhz: 2600, encryptionInTransitSupported: true,
     ebsMaximumBandwidthInMbps: 10000, zones: [us-east-1a, us-east-1b]}
  - {instanceType: m7i.large, supportedArchitectures: [x86_64], supportedUsageClasses: [on-demand, spot], hypervisor: nitro, zones: [us-east-1a]}
  - {instanceType: g5.xlarge, supportedArchitectures: [x86_64], supportedUsageClasses: [on-demand], nvmeTotalSizeInGB: 250,
     gpus: [{name: A10G, manufacturer: NVIDIA, count: 1, memorySizeInMiB: 24576}], zones: [us-east-1b]}
  - {instanceType: inf2.xlarge, supportedArchitectures: [x86_64], neuronDevices: [{name: Inferentia2, count: 1}],
     inferenceAccelerators: [{name: Inferentia, manufacturer: AWS, count: 1}]}
  - {instanceType: c5.metal, supportedArchitectures: [x86_64], zones: [us-east-1c]}
  - {instanceType: t1.micro, supportedArchitectures: [i386, x86_64], zones: [us-east-1a]}
capacityReservations:
  - {id: cr-01, instanceType: p5.48xlarge, availabilityZone: us-east-1a, ownerID: "111122223333", instanceMatchCriteria: targeted,
     reservationType: default, state: active, tags: {team: ml}}
  - {id: cr-02, instanceType: m7g.large, availabilityZone: us-east-1b, ownerID: "444455556666", instanceMatchCriteria: open, state: active}
  - {id: cr-03, instanceType: m7g.large, availabilityZone: us-east-1b, ownerID: "111122223333", state: expired, tags: {team: web}}
  - {id: cr-04, instanceType: c7i.large}
`

func TestEC2DescribeInstanceTypes(t *testing.T) {
	ctx := context.Background()
	_, c := start(t, snapshot(t, capacity))
	names := func(in ec2.DescribeInstanceTypesInput) []string {
		t.Helper()
		var out []string
		for p := ec2.NewDescribeInstanceTypesPaginator(c.ec2, &in); p.HasMorePages(); {
			page, err := p.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range page.InstanceTypes {
				out = append(out, string(it.InstanceType))
			}
		}
		return out
	}
	for _, tc := range []struct {
		name string
		in   ec2.DescribeInstanceTypesInput
		want []string
	}{
		{"everything, 5 per page", ec2.DescribeInstanceTypesInput{MaxResults: aws.Int32(5)}, []string{"m7g.large", "m7i.large", "g5.xlarge", "inf2.xlarge", "c5.metal", "t1.micro"}},
		{"Karpenter's filters", ec2.DescribeInstanceTypesInput{Filters: []ec2types.Filter{filter("supported-virtualization-type", "hvm"),
			filter("processor-info.supported-architecture", "x86_64", "arm64")}}, []string{"m7g.large", "m7i.large", "g5.xlarge", "inf2.xlarge", "c5.metal", "t1.micro"}},
		{"arm64", ec2.DescribeInstanceTypesInput{Filters: []ec2types.Filter{filter("processor-info.supported-architecture", "arm64")}}, []string{"m7g.large"}},
		{"name wildcard", ec2.DescribeInstanceTypesInput{Filters: []ec2types.Filter{filter("instance-type", "m7*")}}, []string{"m7g.large", "m7i.large"}},
		{"spot", ec2.DescribeInstanceTypesInput{Filters: []ec2types.Filter{filter("supported-usage-class", "spot")}}, []string{"m7g.large", "m7i.large"}},
		{"paravirtual", ec2.DescribeInstanceTypesInput{Filters: []ec2types.Filter{filter("supported-virtualization-type", "paravirtual")}}, nil},
		{"by name", ec2.DescribeInstanceTypesInput{InstanceTypes: []ec2types.InstanceType{"c5.metal", "m7g.large"}}, []string{"m7g.large", "c5.metal"}},
	} {
		if got := names(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}

	out, err := c.ec2.DescribeInstanceTypes(ctx, &ec2.DescribeInstanceTypesInput{InstanceTypes: []ec2types.InstanceType{"g5.xlarge", "inf2.xlarge"}})
	if err != nil {
		t.Fatal(err)
	}
	g5, inf2 := out.InstanceTypes[0], out.InstanceTypes[1]
	if g := g5.GpuInfo; g == nil || len(g.Gpus) != 1 || aws.ToString(g.Gpus[0].Name) != "A10G" || aws.ToInt32(g.Gpus[0].MemoryInfo.SizeInMiB) != 24576 {
		t.Errorf("g5 GPUs %+v", g5.GpuInfo)
	}
	if s := g5.InstanceStorageInfo; s == nil || aws.ToInt64(s.TotalSizeInGB) != 250 || s.NvmeSupport != ec2types.EphemeralNvmeSupportRequired {
		t.Errorf("g5 storage %+v", g5.InstanceStorageInfo)
	}
	if inf2.InferenceAcceleratorInfo == nil || len(inf2.InferenceAcceleratorInfo.Accelerators) != 1 || inf2.NeuronInfo == nil || len(inf2.NeuronInfo.NeuronDevices) != 1 {
		t.Errorf("inf2 accelerators %+v, neuron %+v", inf2.InferenceAcceleratorInfo, inf2.NeuronInfo)
	}
	out, err = c.ec2.DescribeInstanceTypes(ctx, &ec2.DescribeInstanceTypesInput{InstanceTypes: []ec2types.InstanceType{"m7g.large"}})
	if err != nil {
		t.Fatal(err)
	}
	m7g := out.InstanceTypes[0]
	if pi := m7g.ProcessorInfo; aws.ToFloat64(pi.SustainedClockSpeedInGhz) != 2.6 || aws.ToString(pi.Manufacturer) != "AWS" ||
		m7g.EbsInfo.EbsOptimizedSupport != ec2types.EbsOptimizedSupportDefault || aws.ToInt32(m7g.EbsInfo.EbsOptimizedInfo.MaximumBandwidthInMbps) != 10000 ||
		!aws.ToBool(m7g.NetworkInfo.EncryptionInTransitSupported) || aws.ToInt32(m7g.VCpuInfo.DefaultVCpus) != 2 || aws.ToInt64(m7g.MemoryInfo.SizeInMiB) != 8192 ||
		m7g.Hypervisor != ec2types.InstanceTypeHypervisorNitro || !slices.Equal(m7g.SupportedVirtualizationTypes, []ec2types.VirtualizationType{"hvm"}) {
		t.Errorf("m7g %+v", m7g)
	}

	_, err = c.ec2.DescribeInstanceTypes(ctx, &ec2.DescribeInstanceTypesInput{InstanceTypes: []ec2types.InstanceType{"m7g.large", "x9.huge"}})
	wantAPIError(t, err, "InvalidInstanceType", http.StatusBadRequest, "The following supplied instance types do not exist: [x9.huge]")
	_, err = c.ec2.DescribeInstanceTypes(ctx, &ec2.DescribeInstanceTypesInput{MaxResults: aws.Int32(101)})
	wantAPIError(t, err, "InvalidParameterValue", http.StatusBadRequest, "Expecting a value between 5 and 100")
	_, err = c.ec2.DescribeInstanceTypes(ctx, &ec2.DescribeInstanceTypesInput{Filters: []ec2types.Filter{filter("network-info.efa-supported", "true")}})
	wantAPIError(t, err, "InvalidParameterValue", http.StatusBadRequest, "network-info.efa-supported")
}

func TestEC2DescribeInstanceTypeOfferings(t *testing.T) {
	ctx := context.Background()
	_, c := start(t, snapshot(t, capacity))
	offers := func(in ec2.DescribeInstanceTypeOfferingsInput) []string {
		t.Helper()
		var out []string
		for p := ec2.NewDescribeInstanceTypeOfferingsPaginator(c.ec2, &in); p.HasMorePages(); {
			page, err := p.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range page.InstanceTypeOfferings {
				out = append(out, string(o.InstanceType)+"@"+aws.ToString(o.Location)+"("+string(o.LocationType)+")")
			}
		}
		return out
	}
	zones := ec2types.LocationTypeAvailabilityZone
	for _, tc := range []struct {
		name string
		in   ec2.DescribeInstanceTypeOfferingsInput
		want []string
	}{
		{"by zone, 5 per page", ec2.DescribeInstanceTypeOfferingsInput{LocationType: zones, MaxResults: aws.Int32(5)}, []string{
			"m7g.large@us-east-1a(availability-zone)", "m7g.large@us-east-1b(availability-zone)", "m7i.large@us-east-1a(availability-zone)",
			"g5.xlarge@us-east-1b(availability-zone)", "c5.metal@us-east-1c(availability-zone)", "t1.micro@us-east-1a(availability-zone)"}},
		{"one zone", ec2.DescribeInstanceTypeOfferingsInput{LocationType: zones, Filters: []ec2types.Filter{filter("location", "us-east-1b")}},
			[]string{"m7g.large@us-east-1b(availability-zone)", "g5.xlarge@us-east-1b(availability-zone)"}},
		{"by region (the default)", ec2.DescribeInstanceTypeOfferingsInput{Filters: []ec2types.Filter{filter("instance-type", "m7*")}},
			[]string{"m7g.large@us-east-1(region)", "m7i.large@us-east-1(region)"}},
	} {
		if got := offers(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("%s:\n%v\nwant %v", tc.name, got, tc.want)
		}
	}
	_, err := c.ec2.DescribeInstanceTypeOfferings(ctx, &ec2.DescribeInstanceTypeOfferingsInput{LocationType: ec2types.LocationTypeAvailabilityZoneId})
	wantAPIError(t, err, "UnsupportedOperation", http.StatusBadRequest, "zone id")

	// No instanceTypes section: both calls are denied.
	_, c = start(t, snapshot(t, header+`cluster: {name: c, accountID: "111122223333"}`+"\n"))
	_, err = c.ec2.DescribeInstanceTypeOfferings(ctx, &ec2.DescribeInstanceTypeOfferingsInput{LocationType: zones})
	wantAPIError(t, err, "UnauthorizedOperation", http.StatusForbidden, "ec2:DescribeInstanceTypeOfferings")
	_, err = c.ec2.DescribeInstanceTypes(ctx, &ec2.DescribeInstanceTypesInput{})
	wantAPIError(t, err, "UnauthorizedOperation", http.StatusForbidden, "ec2:DescribeInstanceTypes")
}

func TestEC2DescribeCapacityReservations(t *testing.T) {
	ctx := context.Background()
	_, c := start(t, snapshot(t, capacity))
	ids := func(in ec2.DescribeCapacityReservationsInput) []string {
		t.Helper()
		var out []string
		for p := ec2.NewDescribeCapacityReservationsPaginator(c.ec2, &in); p.HasMorePages(); {
			page, err := p.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range page.CapacityReservations {
				out = append(out, aws.ToString(r.CapacityReservationId))
			}
		}
		return out
	}
	for _, tc := range []struct {
		name string
		in   ec2.DescribeCapacityReservationsInput
		want []string
	}{
		{"everything, 1 per page", ec2.DescribeCapacityReservationsInput{MaxResults: aws.Int32(1)}, []string{"cr-01", "cr-02", "cr-03", "cr-04"}},
		{"active (no state counts as active)", ec2.DescribeCapacityReservationsInput{Filters: []ec2types.Filter{filter("state", "active")}}, []string{"cr-01", "cr-02", "cr-04"}},
		{"owner", ec2.DescribeCapacityReservationsInput{Filters: []ec2types.Filter{filter("owner-id", "444455556666")}}, []string{"cr-02"}},
		{"tag", ec2.DescribeCapacityReservationsInput{Filters: []ec2types.Filter{filter("tag:team", "*")}}, []string{"cr-01", "cr-03"}},
		{"type and zone", ec2.DescribeCapacityReservationsInput{Filters: []ec2types.Filter{filter("instance-type", "m7g.large"), filter("availability-zone", "us-east-1b"),
			filter("instance-match-criteria", "open")}}, []string{"cr-02"}},
		{"by id", ec2.DescribeCapacityReservationsInput{CapacityReservationIds: []string{"cr-03"}}, []string{"cr-03"}},
	} {
		if got := ids(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}

	out, err := c.ec2.DescribeCapacityReservations(ctx, &ec2.DescribeCapacityReservationsInput{CapacityReservationIds: []string{"cr-01", "cr-04"}})
	if err != nil {
		t.Fatal(err)
	}
	r := out.CapacityReservations[0]
	if aws.ToString(r.InstanceType) != "p5.48xlarge" || aws.ToString(r.AvailabilityZone) != "us-east-1a" || aws.ToString(r.OwnerId) != "111122223333" ||
		r.InstanceMatchCriteria != ec2types.InstanceMatchCriteriaTargeted || r.ReservationType != ec2types.CapacityReservationTypeDefault ||
		r.State != ec2types.CapacityReservationStateActive || len(r.Tags) != 1 || aws.ToString(r.Tags[0].Key) != "team" ||
		aws.ToString(r.CapacityReservationArn) != "arn:aws:ec2:us-east-1:111122223333:capacity-reservation/cr-01" {
		t.Errorf("cr-01 %+v", r)
	}
	if r := out.CapacityReservations[1]; r.State != "" || r.OwnerId != nil {
		t.Errorf("cr-04 %+v: the snapshot gives it no state and no owner", r)
	}

	_, err = c.ec2.DescribeCapacityReservations(ctx, &ec2.DescribeCapacityReservationsInput{CapacityReservationIds: []string{"cr-99"}})
	wantAPIError(t, err, "InvalidCapacityReservationId.NotFound", http.StatusBadRequest, "cr-99")

	_, c = start(t, snapshot(t, header+`cluster: {name: c, accountID: "111122223333"}`+"\n"))
	_, err = c.ec2.DescribeCapacityReservations(ctx, &ec2.DescribeCapacityReservationsInput{})
	wantAPIError(t, err, "UnauthorizedOperation", http.StatusForbidden, "ec2:DescribeCapacityReservations")
}
