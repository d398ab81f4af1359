package facts

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
)

// The network and capacity facts: what a node needs to reach the API server and AWS from its subnet,
// the keys its volumes are encrypted with, and the instance types and capacity a NodePool may launch.

// ClusterNetwork is what DescribeCluster says of the cluster's endpoint and control-plane network.
type ClusterNetwork struct {
	EndpointPublicAccess   *bool    `yaml:"endpointPublicAccess,omitempty" json:"endpointPublicAccess,omitempty"`
	EndpointPrivateAccess  *bool    `yaml:"endpointPrivateAccess,omitempty" json:"endpointPrivateAccess,omitempty"`
	PublicAccessCidrs      []string `yaml:"publicAccessCidrs,omitempty" json:"publicAccessCidrs,omitempty"`
	ClusterSecurityGroupID string   `yaml:"clusterSecurityGroupID,omitempty" json:"clusterSecurityGroupID,omitempty"`
	SecurityGroupIDs       []string `yaml:"securityGroupIDs,omitempty" json:"securityGroupIDs,omitempty"`
	SubnetIDs              []string `yaml:"subnetIDs,omitempty" json:"subnetIDs,omitempty"`
	IPFamily               string   `yaml:"ipFamily,omitempty" json:"ipFamily,omitempty"`
}

// VPCAttributes are the VPC's DNS attributes (DescribeVpcAttribute).
type VPCAttributes struct {
	EnableDNSSupport   *bool `yaml:"enableDnsSupport,omitempty" json:"enableDnsSupport,omitempty"`
	EnableDNSHostnames *bool `yaml:"enableDnsHostnames,omitempty" json:"enableDnsHostnames,omitempty"`
}

// SubnetNetwork is what DescribeSubnets and DescribeRouteTables say of a subnet's addresses and routes.
type SubnetNetwork struct {
	AvailabilityZoneID      string  `yaml:"availabilityZoneID,omitempty" json:"availabilityZoneID,omitempty"`
	CIDRBlock               string  `yaml:"cidrBlock,omitempty" json:"cidrBlock,omitempty"`
	AvailableIPAddressCount *int    `yaml:"availableIpAddressCount,omitempty" json:"availableIpAddressCount,omitempty"`
	RouteTableID            string  `yaml:"routeTableID,omitempty" json:"routeTableID,omitempty"`
	Routes                  []Route `yaml:"routes,omitempty" json:"routes,omitempty"`
}

// Route is one route of a subnet's table other than local.
type Route struct {
	Destination string `yaml:"destination" json:"destination"`
	Target      string `yaml:"target" json:"target"`
	State       string `yaml:"state,omitempty" json:"state,omitempty"`
}

// SecurityGroupRules are a group's IpPermissions and IpPermissionsEgress.
type SecurityGroupRules struct {
	Ingress []SecurityGroupRule `yaml:"ingress,omitempty" json:"ingress,omitempty"`
	Egress  []SecurityGroupRule `yaml:"egress,omitempty" json:"egress,omitempty"`
}

// SecurityGroupRule is one permission: protocol, ports and peers.
type SecurityGroupRule struct {
	Protocol      string   `yaml:"protocol" json:"protocol"`
	FromPort      *int     `yaml:"fromPort,omitempty" json:"fromPort,omitempty"`
	ToPort        *int     `yaml:"toPort,omitempty" json:"toPort,omitempty"`
	GroupIDs      []string `yaml:"groupIDs,omitempty" json:"groupIDs,omitempty"`
	CIDRs         []string `yaml:"cidrs,omitempty" json:"cidrs,omitempty"`
	IPv6CIDRs     []string `yaml:"ipv6Cidrs,omitempty" json:"ipv6Cidrs,omitempty"`
	PrefixListIDs []string `yaml:"prefixListIDs,omitempty" json:"prefixListIDs,omitempty"`
}

// NATGateway is a NAT gateway of the cluster's VPC.
type NATGateway struct {
	ID               string   `yaml:"id" json:"id"`
	State            string   `yaml:"state,omitempty" json:"state,omitempty"`
	ConnectivityType string   `yaml:"connectivityType,omitempty" json:"connectivityType,omitempty"`
	PublicIPs        []string `yaml:"publicIps,omitempty" json:"publicIps,omitempty"`
}

// VPCEndpoint is a VPC endpoint of the cluster's VPC.
type VPCEndpoint struct {
	ID                string   `yaml:"id" json:"id"`
	ServiceName       string   `yaml:"serviceName" json:"serviceName"`
	Type              string   `yaml:"type,omitempty" json:"type,omitempty"`
	State             string   `yaml:"state,omitempty" json:"state,omitempty"`
	PrivateDNSEnabled *bool    `yaml:"privateDnsEnabled,omitempty" json:"privateDnsEnabled,omitempty"`
	SecurityGroupIDs  []string `yaml:"securityGroupIDs,omitempty" json:"securityGroupIDs,omitempty"`
	RouteTableIDs     []string `yaml:"routeTableIDs,omitempty" json:"routeTableIDs,omitempty"`
}

// KMSKey is DescribeKey's answer for a key reference as a class writes it.
type KMSKey struct {
	Ref      string `yaml:"ref" json:"ref"`
	Found    *bool  `yaml:"found,omitempty" json:"found,omitempty"`
	ARN      string `yaml:"arn,omitempty" json:"arn,omitempty"`
	KeyState string `yaml:"keyState,omitempty" json:"keyState,omitempty"`
	KeySpec  string `yaml:"keySpec,omitempty" json:"keySpec,omitempty"`
	KeyUsage string `yaml:"keyUsage,omitempty" json:"keyUsage,omitempty"`
	Error    string `yaml:"error,omitempty" json:"error,omitempty"`
}

// CapacityReservation is an active EC2 capacity reservation.
type CapacityReservation struct {
	ID                    string            `yaml:"id" json:"id"`
	InstanceType          string            `yaml:"instanceType,omitempty" json:"instanceType,omitempty"`
	AvailabilityZone      string            `yaml:"availabilityZone,omitempty" json:"availabilityZone,omitempty"`
	OwnerID               string            `yaml:"ownerID,omitempty" json:"ownerID,omitempty"`
	InstanceMatchCriteria string            `yaml:"instanceMatchCriteria,omitempty" json:"instanceMatchCriteria,omitempty"`
	ReservationType       string            `yaml:"reservationType,omitempty" json:"reservationType,omitempty"`
	State                 string            `yaml:"state,omitempty" json:"state,omitempty"`
	Tags                  map[string]string `yaml:"tags,omitempty" json:"tags,omitempty"`
}

// InstanceType is what DescribeInstanceTypes and DescribeInstanceTypeOfferings say of one type.
type InstanceType struct {
	InstanceType                 string         `yaml:"instanceType" json:"instanceType"`
	SupportedArchitectures       []string       `yaml:"supportedArchitectures,omitempty" json:"supportedArchitectures,omitempty"`
	SupportedUsageClasses        []string       `yaml:"supportedUsageClasses,omitempty" json:"supportedUsageClasses,omitempty"`
	Hypervisor                   string         `yaml:"hypervisor,omitempty" json:"hypervisor,omitempty"`
	DefaultVCPUs                 int            `yaml:"defaultVCpus,omitempty" json:"defaultVCpus,omitempty"`
	MemorySizeInMiB              int            `yaml:"memorySizeInMiB,omitempty" json:"memorySizeInMiB,omitempty"`
	ProcessorManufacturer        string         `yaml:"processorManufacturer,omitempty" json:"processorManufacturer,omitempty"`
	SustainedClockSpeedInMhz     int            `yaml:"sustainedClockSpeedInMhz,omitempty" json:"sustainedClockSpeedInMhz,omitempty"`
	EncryptionInTransitSupported *bool          `yaml:"encryptionInTransitSupported,omitempty" json:"encryptionInTransitSupported,omitempty"`
	NVMeTotalSizeInGB            int            `yaml:"nvmeTotalSizeInGB,omitempty" json:"nvmeTotalSizeInGB,omitempty"`
	EBSMaximumBandwidthInMbps    int            `yaml:"ebsMaximumBandwidthInMbps,omitempty" json:"ebsMaximumBandwidthInMbps,omitempty"`
	GPUs                         []Accelerator  `yaml:"gpus,omitempty" json:"gpus,omitempty"`
	InferenceAccelerators        []Accelerator  `yaml:"inferenceAccelerators,omitempty" json:"inferenceAccelerators,omitempty"`
	NeuronDevices                []NeuronDevice `yaml:"neuronDevices,omitempty" json:"neuronDevices,omitempty"`
	Zones                        []string       `yaml:"zones,omitempty" json:"zones,omitempty"`
}

// Accelerator is a GPU or inference accelerator of an instance type.
type Accelerator struct {
	Name            string `yaml:"name" json:"name"`
	Manufacturer    string `yaml:"manufacturer,omitempty" json:"manufacturer,omitempty"`
	Count           int    `yaml:"count,omitempty" json:"count,omitempty"`
	MemorySizeInMiB int    `yaml:"memorySizeInMiB,omitempty" json:"memorySizeInMiB,omitempty"`
}

// NeuronDevice is a Neuron device of an instance type.
type NeuronDevice struct {
	Name  string `yaml:"name" json:"name"`
	Count int    `yaml:"count,omitempty" json:"count,omitempty"`
}

// Quota codes the rules ask about.
const (
	// QuotaSecurityGroupsPerENI is Service Quotas' "Security groups per network interface" (default 5).
	QuotaSecurityGroupsPerENI = "vpc/L-2AFB9258"
)

// KMS key states that matter to EBS (KMS KeyState).
const (
	KeyStateEnabled = "Enabled"
)

// KMSAccessDenied is KMSKey.Error when DescribeKey was refused (the key policy does not let the guard
// read the key): its state is unknown.
const KMSAccessDenied = "AccessDenied"

// RulesKnown reports whether a group's rules were read: a group from an older snapshot has neither
// ingress nor egress, and then nothing can be said of what it allows.
func (g *SecurityGroup) RulesKnown() bool { return g.Ingress != nil || g.Egress != nil }

// VPC implements Provider.
func (s *Snapshot) VPC(ctx context.Context) (*VPCAttributes, error) {
	if err := s.Known(ctx, VPC); err != nil {
		return nil, err
	}
	return s.facts.VPC, nil
}

// NATGateways implements Provider.
func (s *Snapshot) NATGateways(ctx context.Context) ([]NATGateway, error) {
	if err := s.Known(ctx, NATGateways); err != nil {
		return nil, err
	}
	return *s.facts.NATGateways, nil
}

// VPCEndpoints implements Provider.
func (s *Snapshot) VPCEndpoints(ctx context.Context) ([]VPCEndpoint, error) {
	if err := s.Known(ctx, VPCEndpoints); err != nil {
		return nil, err
	}
	return *s.facts.VPCEndpoints, nil
}

// KMSKey implements Provider: kmsKeys is a lookup keyed by the reference as written, so a reference
// without an entry is unknown.
func (s *Snapshot) KMSKey(ctx context.Context, ref string) (*KMSKey, error) {
	if err := s.Known(ctx, KMSKeys); err != nil {
		return nil, err
	}
	for i := range *s.facts.KMSKeys {
		if k := &(*s.facts.KMSKeys)[i]; k.Ref == ref {
			return k, nil
		}
	}
	return nil, Unknown(KMSKeys, fmt.Sprintf("the facts snapshot has no kmsKeys entry for %s", ref))
}

// ServiceQuota implements Provider: serviceQuotas is a lookup, so a quota without an entry is unknown.
func (s *Snapshot) ServiceQuota(ctx context.Context, code string) (int, error) {
	if err := s.Known(ctx, ServiceQuotas); err != nil {
		return 0, err
	}
	v, ok := (*s.facts.ServiceQuotas)[code]
	if !ok {
		return 0, Unknown(ServiceQuotas, fmt.Sprintf("the facts snapshot has no serviceQuotas entry for %s", code))
	}
	return v, nil
}

// CapacityReservations implements Provider.
func (s *Snapshot) CapacityReservations(ctx context.Context) ([]CapacityReservation, error) {
	if err := s.Known(ctx, CapacityReservations); err != nil {
		return nil, err
	}
	return *s.facts.CapacityReservations, nil
}

// InstanceTypes implements Provider.
func (s *Snapshot) InstanceTypes(ctx context.Context) ([]InstanceType, error) {
	if err := s.Known(ctx, InstanceTypes); err != nil {
		return nil, err
	}
	return *s.facts.InstanceTypes, nil
}

// subnetNetwork checks a subnet's CIDR block and routes.
func (v *validator) subnetNetwork(i int, s SubnetNetwork) {
	if s.CIDRBlock != "" {
		if _, err := netip.ParsePrefix(s.CIDRBlock); err != nil {
			v.errorf(v.at("subnets", i, "cidrBlock"), "subnets[%d].cidrBlock %q is not a CIDR block such as 10.0.32.0/19", i, s.CIDRBlock)
		}
	}
	if len(s.Routes) > 0 && s.RouteTableID == "" {
		v.errorf(v.at("subnets", i, "routes"), "subnets[%d] has routes but no routeTableID: give the table whose routes they are (the explicitly associated one, else the VPC's main table)", i)
	}
	for j, r := range s.Routes {
		if r.Destination == "" || r.Target == "" {
			v.errorf(v.at("subnets", i, "routes", j), "subnets[%d].routes[%d] needs a destination and a target", i, j)
		}
		switch r.State {
		case "", RouteActive, RouteBlackhole:
		default:
			v.errorf(v.at("subnets", i, "routes", j, "state"), "subnets[%d].routes[%d].state %q: expected active or blackhole", i, j, r.State)
		}
	}
}

// Route states (EC2 RouteState).
const (
	RouteActive    = "active"
	RouteBlackhole = "blackhole"
)

// network checks the network and capacity sections.
func (v *validator) network(cf *ClusterFacts) {
	if c := cf.Cluster; c != nil {
		switch c.IPFamily {
		case "", "ipv4", "ipv6":
		default:
			v.errorf(v.at("cluster", "ipFamily"), "cluster.ipFamily %q: expected ipv4 or ipv6", c.IPFamily)
		}
		for j, cidr := range c.PublicAccessCidrs {
			if _, err := netip.ParsePrefix(cidr); err != nil {
				v.errorf(v.at("cluster", "publicAccessCidrs", j), "cluster.publicAccessCidrs[%d] %q is not a CIDR block such as 203.0.113.0/24", j, cidr)
			}
		}
	}
	if cf.NATGateways != nil {
		seen := map[string]int{}
		for i, n := range *cf.NATGateways {
			v.unique(seen, n.ID, "natGateways", i, "id")
			for j, ip := range n.PublicIPs {
				if _, err := netip.ParseAddr(ip); err != nil {
					v.errorf(v.at("natGateways", i, "publicIps", j), "natGateways[%d].publicIps[%d] %q is not an IP address", i, j, ip)
				}
			}
		}
	}
	if cf.VPCEndpoints != nil {
		seen := map[string]int{}
		for i, e := range *cf.VPCEndpoints {
			v.unique(seen, e.ID, "vpcEndpoints", i, "id")
			switch e.Type {
			case "", "Interface", "Gateway", "GatewayLoadBalancer", "Resource", "ServiceNetwork":
			default:
				v.errorf(v.at("vpcEndpoints", i, "type"), "vpcEndpoints[%d].type %q: expected Interface, Gateway, GatewayLoadBalancer, Resource or ServiceNetwork", i, e.Type)
			}
		}
	}
	if cf.KMSKeys != nil {
		seen := map[string]int{}
		for i, k := range *cf.KMSKeys {
			v.unique(seen, k.Ref, "kmsKeys", i, "ref")
			switch {
			case k.Error != "" && k.Error != KMSAccessDenied:
				v.errorf(v.at("kmsKeys", i, "error"), "kmsKeys[%d].error %q: expected AccessDenied (DescribeKey refused), or no error", i, k.Error)
			case k.Error != "" && (k.Found != nil || k.ARN != "" || k.KeyState != ""):
				v.errorf(v.at("kmsKeys", i, "error"), "kmsKeys[%d] has an error and an answer: a refused DescribeKey says nothing of the key", i)
			case k.Error == "" && k.Found == nil:
				v.errorf(v.at("kmsKeys", i), "kmsKeys[%d] needs found: true (with keyState, keySpec and keyUsage), found: false, or error: AccessDenied", i)
			}
		}
	}
	if cf.ServiceQuotas != nil {
		for code := range *cf.ServiceQuotas {
			if service, quota, ok := strings.Cut(code, "/"); !ok || service == "" || !strings.HasPrefix(quota, "L-") {
				v.errorf(v.at("serviceQuotas", code), "serviceQuotas key %q: expected service/quota-code, such as vpc/L-2AFB9258", code)
			}
		}
	}
	if cf.CapacityReservations != nil {
		seen := map[string]int{}
		for i, r := range *cf.CapacityReservations {
			v.unique(seen, r.ID, "capacityReservations", i, "id")
		}
	}
	if cf.InstanceTypes != nil {
		seen := map[string]int{}
		for i, t := range *cf.InstanceTypes {
			v.unique(seen, t.InstanceType, "instanceTypes", i, "instanceType")
			if t.InstanceType != "" && !strings.Contains(t.InstanceType, ".") {
				v.errorf(v.at("instanceTypes", i, "instanceType"), "instanceTypes[%d].instanceType %q: expected family.size, such as m7g.large", i, t.InstanceType)
			}
		}
	}
}
