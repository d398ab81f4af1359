package facts

// The network and capacity sections of a ClusterFacts snapshot. The snapshot format is one contract
// for identity, network and capacity facts alike, so a snapshot written with them (by hand, or by a
// later facts export) decodes strictly today; no rule reads them yet, and no provider answers them:
// the network and capacity rules that will come with them are not in this build.

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
