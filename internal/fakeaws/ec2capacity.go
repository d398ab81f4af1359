package fakeaws

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/facts"
)

// The capacity calls of EC2: DescribeInstanceTypes and DescribeInstanceTypeOfferings from the
// snapshot's instanceTypes section (each type's zones are its offerings), DescribeCapacityReservations
// from capacityReservations. They honour EC2's filters and pages (MaxResults, NextToken) as the other
// Describe calls do.
//
// The instanceTypes section holds what Karpenter's filtered call returns, so every type is served as
// supporting HVM virtualization; a reservation without a state is served without one, and the
// state filter sees it as active (the section lists the region's active reservations).

// instanceTypesOp, instanceTypeOfferingsOp and capacityReservationsOp describe the operations'
// parameters for ec2Params: the filters the fake can answer from the snapshot, and MaxResults' range.
var (
	instanceTypesOp = ec2Op{idParam: "InstanceType", minResults: 5, maxResults: 100,
		filters: []string{"hypervisor", "instance-type", "memory-info.size-in-mib", "processor-info.supported-architecture",
			"processor-info.sustained-clock-speed-in-ghz", "supported-usage-class", "supported-virtualization-type", "vcpu-info.default-vcpus"}}
	instanceTypeOfferingsOp = ec2Op{minResults: 5, maxResults: 1000, filters: []string{"instance-type", "location"}}
	capacityReservationsOp  = ec2Op{idParam: "CapacityReservationId", idPrefix: "cr-", minResults: 1, maxResults: 1000,
		filters: []string{"availability-zone", "instance-match-criteria", "instance-type", "owner-id", "state", "tag-key"}}
)

type ec2InstanceType struct {
	InstanceType                 string              `xml:"instanceType"`
	Hypervisor                   string              `xml:"hypervisor,omitempty"`
	SupportedUsageClasses        items[string]       `xml:"supportedUsageClasses"`
	SupportedVirtualizationTypes items[string]       `xml:"supportedVirtualizationTypes"`
	ProcessorInfo                ec2ProcessorInfo    `xml:"processorInfo"`
	VCPUInfo                     *ec2VCPUInfo        `xml:"vCpuInfo,omitempty"`
	MemoryInfo                   *ec2MemoryInfo      `xml:"memoryInfo,omitempty"`
	NetworkInfo                  *ec2NetworkInfo     `xml:"networkInfo,omitempty"`
	InstanceStorageInfo          *ec2InstanceStorage `xml:"instanceStorageInfo,omitempty"`
	EBSInfo                      ec2EBSInfo          `xml:"ebsInfo"`
	GPUInfo                      *struct {
		GPUs items[ec2Device] `xml:"gpus"`
	} `xml:"gpuInfo,omitempty"`
	InferenceAcceleratorInfo *struct {
		Accelerators members[ec2Device] `xml:"accelerators"`
	} `xml:"inferenceAcceleratorInfo,omitempty"`
	NeuronInfo *struct {
		NeuronDevices items[ec2Device] `xml:"neuronDevices"`
	} `xml:"neuronInfo,omitempty"`
}

type ec2ProcessorInfo struct {
	SupportedArchitectures   items[string] `xml:"supportedArchitectures"`
	SustainedClockSpeedInGhz string        `xml:"sustainedClockSpeedInGhz,omitempty"`
	Manufacturer             string        `xml:"manufacturer,omitempty"`
}

type ec2VCPUInfo struct {
	DefaultVCPUs int `xml:"defaultVCpus"`
}

type ec2MemoryInfo struct {
	SizeInMiB int `xml:"sizeInMiB"`
}

type ec2NetworkInfo struct {
	EncryptionInTransitSupported bool `xml:"encryptionInTransitSupported"`
}

type ec2InstanceStorage struct {
	TotalSizeInGB int    `xml:"totalSizeInGB"`
	NvmeSupport   string `xml:"nvmeSupport"`
}

type ec2EBSInfo struct {
	EBSOptimizedSupport string `xml:"ebsOptimizedSupport"`
	EBSOptimizedInfo    *struct {
		MaximumBandwidthInMbps int `xml:"maximumBandwidthInMbps"`
	} `xml:"ebsOptimizedInfo,omitempty"`
}

// ec2Device is a GPU, an inference accelerator or a Neuron device.
type ec2Device struct {
	Name         string         `xml:"name"`
	Manufacturer string         `xml:"manufacturer,omitempty"`
	Count        int            `xml:"count"`
	MemoryInfo   *ec2MemoryInfo `xml:"memoryInfo,omitempty"`
}

type ec2InstanceTypeOffering struct {
	InstanceType string `xml:"instanceType"`
	LocationType string `xml:"locationType"`
	Location     string `xml:"location"`
}

type ec2CapacityReservation struct {
	CapacityReservationID  string         `xml:"capacityReservationId"`
	CapacityReservationArn string         `xml:"capacityReservationArn"`
	OwnerID                string         `xml:"ownerId,omitempty"`
	InstanceType           string         `xml:"instanceType,omitempty"`
	AvailabilityZone       string         `xml:"availabilityZone,omitempty"`
	InstanceMatchCriteria  string         `xml:"instanceMatchCriteria,omitempty"`
	ReservationType        string         `xml:"reservationType,omitempty"`
	State                  string         `xml:"state,omitempty"`
	TagSet                 *items[ec2Tag] `xml:"tagSet,omitempty"`
}

// ghz writes a clock speed in MHz as DescribeInstanceTypes gives it, in GHz.
func ghz(mhz int) string { return strconv.FormatFloat(float64(mhz)/1000, 'f', -1, 64) }

// ec2InstanceTypeOf is what DescribeInstanceTypes says of a type: the NVMe instance store as required
// NVMe, the EBS bandwidth as EBS-optimized by default (a type without is EBS-optimized on request).
func ec2InstanceTypeOf(t facts.InstanceType) ec2InstanceType {
	out := ec2InstanceType{
		InstanceType: t.InstanceType, Hypervisor: t.Hypervisor,
		SupportedUsageClasses:        items[string]{t.SupportedUsageClasses},
		SupportedVirtualizationTypes: items[string]{[]string{"hvm"}},
		ProcessorInfo:                ec2ProcessorInfo{SupportedArchitectures: items[string]{t.SupportedArchitectures}, Manufacturer: t.ProcessorManufacturer},
		EBSInfo:                      ec2EBSInfo{EBSOptimizedSupport: "supported"},
	}
	if t.SustainedClockSpeedInMhz > 0 {
		out.ProcessorInfo.SustainedClockSpeedInGhz = ghz(t.SustainedClockSpeedInMhz)
	}
	if t.DefaultVCPUs > 0 {
		out.VCPUInfo = &ec2VCPUInfo{DefaultVCPUs: t.DefaultVCPUs}
	}
	if t.MemorySizeInMiB > 0 {
		out.MemoryInfo = &ec2MemoryInfo{SizeInMiB: t.MemorySizeInMiB}
	}
	if t.EncryptionInTransitSupported != nil {
		out.NetworkInfo = &ec2NetworkInfo{EncryptionInTransitSupported: *t.EncryptionInTransitSupported}
	}
	if t.NVMeTotalSizeInGB > 0 {
		out.InstanceStorageInfo = &ec2InstanceStorage{TotalSizeInGB: t.NVMeTotalSizeInGB, NvmeSupport: "required"}
	}
	if t.EBSMaximumBandwidthInMbps > 0 {
		out.EBSInfo.EBSOptimizedSupport = "default"
		out.EBSInfo.EBSOptimizedInfo = &struct {
			MaximumBandwidthInMbps int `xml:"maximumBandwidthInMbps"`
		}{t.EBSMaximumBandwidthInMbps}
	}
	devices := func(as []facts.Accelerator) items[ec2Device] {
		var out items[ec2Device]
		for _, a := range as {
			d := ec2Device{Name: a.Name, Manufacturer: a.Manufacturer, Count: a.Count}
			if a.MemorySizeInMiB > 0 {
				d.MemoryInfo = &ec2MemoryInfo{SizeInMiB: a.MemorySizeInMiB}
			}
			out.Item = append(out.Item, d)
		}
		return out
	}
	if len(t.GPUs) > 0 {
		out.GPUInfo = &struct {
			GPUs items[ec2Device] `xml:"gpus"`
		}{devices(t.GPUs)}
	}
	if len(t.InferenceAccelerators) > 0 {
		out.InferenceAcceleratorInfo = &struct {
			Accelerators members[ec2Device] `xml:"accelerators"`
		}{members[ec2Device]{devices(t.InferenceAccelerators).Item}} // EC2 lists these as <member>, not <item>
	}
	if len(t.NeuronDevices) > 0 {
		var neuron items[ec2Device]
		for _, n := range t.NeuronDevices {
			neuron.Item = append(neuron.Item, ec2Device{Name: n.Name, Count: n.Count})
		}
		out.NeuronInfo = &struct {
			NeuronDevices items[ec2Device] `xml:"neuronDevices"`
		}{neuron}
	}
	return out
}

func (ec2API) instanceTypes(w http.ResponseWriter, r *request, wd *world, p *ec2Request) error {
	if wd.cf.InstanceTypes == nil {
		return denied(r, wd)
	}
	all := *wd.cf.InstanceTypes
	var missing []string
	for _, id := range p.ids {
		if !slices.ContainsFunc(all, func(t facts.InstanceType) bool { return t.InstanceType == id }) {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		return badRequest("InvalidInstanceType", "The following supplied instance types do not exist: [%s]", strings.Join(missing, ", "))
	}
	var out []ec2InstanceType
	for _, t := range all {
		if len(p.ids) > 0 && !slices.Contains(p.ids, t.InstanceType) {
			continue
		}
		ok := p.matches(func(name string) []string {
			switch name {
			case "hypervisor":
				if t.Hypervisor == "" {
					return nil
				}
				return []string{t.Hypervisor}
			case "instance-type":
				return []string{t.InstanceType}
			case "memory-info.size-in-mib":
				return []string{strconv.Itoa(t.MemorySizeInMiB)}
			case "processor-info.supported-architecture":
				return t.SupportedArchitectures
			case "processor-info.sustained-clock-speed-in-ghz":
				return []string{ghz(t.SustainedClockSpeedInMhz)}
			case "supported-usage-class":
				return t.SupportedUsageClasses
			case "supported-virtualization-type":
				return []string{"hvm"}
			case "vcpu-info.default-vcpus":
				return []string{strconv.Itoa(t.DefaultVCPUs)}
			}
			return nil // types carry no tags
		})
		if ok {
			out = append(out, ec2InstanceTypeOf(t))
		}
	}
	got, next := page("ec2:"+r.op, out, p.offset, p.size)
	return writeEC2(w, r, struct {
		RequestID       string                 `xml:"requestId"`
		InstanceTypeSet items[ec2InstanceType] `xml:"instanceTypeSet"`
		NextToken       string                 `xml:"nextToken,omitempty"`
	}{RequestID: r.id, InstanceTypeSet: items[ec2InstanceType]{got}, NextToken: next})
}

// instanceTypeOfferings answers by zone (LocationType availability-zone) or by region (the default):
// a type with zones is offered in the region.
func (ec2API) instanceTypeOfferings(w http.ResponseWriter, r *request, wd *world, p *ec2Request) error {
	if wd.cf.InstanceTypes == nil {
		return denied(r, wd)
	}
	locationType := r.Form.Get("LocationType")
	switch locationType {
	case "":
		locationType = "region"
	case "region", "availability-zone":
	case "availability-zone-id":
		return badRequest("UnsupportedOperation", "fakeaws does not serve offerings by zone id: the snapshot's instanceTypes name zones")
	default:
		return badRequest("InvalidParameterValue", "Value (%s) for parameter locationType is invalid. Valid values: region, availability-zone, availability-zone-id", locationType)
	}
	var out []ec2InstanceTypeOffering
	for _, t := range *wd.cf.InstanceTypes {
		locations := t.Zones
		if locationType == "region" {
			locations = nil
			if len(t.Zones) > 0 {
				locations = []string{wd.region}
			}
		}
		for _, loc := range locations {
			ok := p.matches(func(name string) []string {
				switch name {
				case "instance-type":
					return []string{t.InstanceType}
				case "location":
					return []string{loc}
				}
				return nil
			})
			if ok {
				out = append(out, ec2InstanceTypeOffering{InstanceType: t.InstanceType, LocationType: locationType, Location: loc})
			}
		}
	}
	got, next := page("ec2:"+r.op, out, p.offset, p.size)
	return writeEC2(w, r, struct {
		RequestID               string                         `xml:"requestId"`
		InstanceTypeOfferingSet items[ec2InstanceTypeOffering] `xml:"instanceTypeOfferingSet"`
		NextToken               string                         `xml:"nextToken,omitempty"`
	}{RequestID: r.id, InstanceTypeOfferingSet: items[ec2InstanceTypeOffering]{got}, NextToken: next})
}

func (ec2API) capacityReservations(w http.ResponseWriter, r *request, wd *world, p *ec2Request) error {
	if wd.cf.CapacityReservations == nil {
		return denied(r, wd)
	}
	all := *wd.cf.CapacityReservations
	for _, id := range p.ids {
		if !slices.ContainsFunc(all, func(c facts.CapacityReservation) bool { return c.ID == id }) {
			return badRequest("InvalidCapacityReservationId.NotFound", "The capacity reservation ID '%s' does not exist", id)
		}
	}
	var out []ec2CapacityReservation
	for _, c := range all {
		if len(p.ids) > 0 && !slices.Contains(p.ids, c.ID) {
			continue
		}
		owner := c.OwnerID
		if owner == "" {
			owner = wd.account
		}
		ok := p.matches(func(name string) []string {
			switch name {
			case "availability-zone":
				return nonEmpty(c.AvailabilityZone)
			case "instance-match-criteria":
				return nonEmpty(c.InstanceMatchCriteria)
			case "instance-type":
				return nonEmpty(c.InstanceType)
			case "owner-id":
				return nonEmpty(c.OwnerID)
			case "state":
				if c.State == "" {
					return []string{"active"}
				}
				return []string{c.State}
			}
			return tagFilter(name, c.Tags)
		})
		if !ok {
			continue
		}
		out = append(out, ec2CapacityReservation{
			CapacityReservationID: c.ID, CapacityReservationArn: wd.arn("ec2", wd.region, owner, "capacity-reservation/"+c.ID),
			OwnerID: c.OwnerID, InstanceType: c.InstanceType, AvailabilityZone: c.AvailabilityZone,
			InstanceMatchCriteria: c.InstanceMatchCriteria, ReservationType: c.ReservationType, State: c.State, TagSet: tagSet(c.Tags),
		})
	}
	got, next := page("ec2:"+r.op, out, p.offset, p.size)
	return writeEC2(w, r, struct {
		RequestID              string                        `xml:"requestId"`
		CapacityReservationSet items[ec2CapacityReservation] `xml:"capacityReservationSet"`
		NextToken              string                        `xml:"nextToken,omitempty"`
	}{RequestID: r.id, CapacityReservationSet: items[ec2CapacityReservation]{got}, NextToken: next})
}

// nonEmpty is a filter's values for a field the snapshot may leave out: none when it does.
func nonEmpty(v string) []string {
	if v == "" {
		return nil
	}
	return []string{v}
}
