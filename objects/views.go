package objects

// Metadata is the part of ObjectMeta the rules read.
type Metadata struct {
	Name        string            `json:"name,omitempty" yaml:"name"`
	Namespace   string            `json:"namespace,omitempty" yaml:"namespace"`
	Annotations map[string]string `json:"annotations,omitempty" yaml:"annotations"`
	Labels      map[string]string `json:"labels,omitempty" yaml:"labels"`
}

// EC2NodeClass is the typed view of a karpenter.k8s.aws EC2NodeClass (v1 or v1beta1).
type EC2NodeClass struct {
	Metadata Metadata         `json:"metadata,omitempty" yaml:"metadata"`
	Spec     EC2NodeClassSpec `json:"spec,omitempty" yaml:"spec"`
}

// EC2NodeClassSpec holds the EC2NodeClass fields the rules read.
type EC2NodeClassSpec struct {
	AMIFamily                  string               `json:"amiFamily,omitempty" yaml:"amiFamily"`
	AMISelectorTerms           []AMISelectorTerm    `json:"amiSelectorTerms,omitempty" yaml:"amiSelectorTerms"`
	SubnetSelectorTerms        []SelectorTerm       `json:"subnetSelectorTerms,omitempty" yaml:"subnetSelectorTerms"`
	SecurityGroupSelectorTerms []SelectorTerm       `json:"securityGroupSelectorTerms,omitempty" yaml:"securityGroupSelectorTerms"`
	Role                       string               `json:"role,omitempty" yaml:"role"`
	InstanceProfile            string               `json:"instanceProfile,omitempty" yaml:"instanceProfile"`
	UserData                   *string              `json:"userData,omitempty" yaml:"userData"`
	MetadataOptions            *MetadataOptions     `json:"metadataOptions,omitempty" yaml:"metadataOptions"`
	BlockDeviceMappings        []BlockDeviceMapping `json:"blockDeviceMappings,omitempty" yaml:"blockDeviceMappings"`
	AssociatePublicIPAddress   *bool                `json:"associatePublicIPAddress,omitempty" yaml:"associatePublicIPAddress"`
	Kubelet                    map[string]any       `json:"kubelet,omitempty" yaml:"kubelet"`
	// CapacityReservationSelectorTerms select the capacity reservations Karpenter may launch into.
	CapacityReservationSelectorTerms []CapacityReservationSelectorTerm `json:"capacityReservationSelectorTerms,omitempty" yaml:"capacityReservationSelectorTerms"`
}

// CapacityReservationSelectorTerm is one term of spec.capacityReservationSelectorTerms: an id, or
// tags, owner and match criteria ANDed; terms are ORed.
type CapacityReservationSelectorTerm struct {
	ID                    string            `json:"id,omitempty" yaml:"id"`
	OwnerID               string            `json:"ownerID,omitempty" yaml:"ownerID"`
	InstanceMatchCriteria string            `json:"instanceMatchCriteria,omitempty" yaml:"instanceMatchCriteria"`
	Tags                  map[string]string `json:"tags,omitempty" yaml:"tags"`
}

// AMISelectorTerm is one term of spec.amiSelectorTerms; fields are ANDed, terms ORed.
type AMISelectorTerm struct {
	Alias        string            `json:"alias,omitempty" yaml:"alias"`
	ID           string            `json:"id,omitempty" yaml:"id"`
	Name         string            `json:"name,omitempty" yaml:"name"`
	Owner        string            `json:"owner,omitempty" yaml:"owner"`
	SSMParameter string            `json:"ssmParameter,omitempty" yaml:"ssmParameter"`
	Tags         map[string]string `json:"tags,omitempty" yaml:"tags"`
}

// SelectorTerm is one term of a subnet or security-group selector.
type SelectorTerm struct {
	ID   string            `json:"id,omitempty" yaml:"id"`
	Name string            `json:"name,omitempty" yaml:"name"`
	Tags map[string]string `json:"tags,omitempty" yaml:"tags"`
}

// MetadataOptions is spec.metadataOptions (IMDS settings).
type MetadataOptions struct {
	HTTPEndpoint            string `json:"httpEndpoint,omitempty" yaml:"httpEndpoint"`
	HTTPTokens              string `json:"httpTokens,omitempty" yaml:"httpTokens"`
	HTTPPutResponseHopLimit *int64 `json:"httpPutResponseHopLimit,omitempty" yaml:"httpPutResponseHopLimit"`
}

// BlockDeviceMapping is one entry of spec.blockDeviceMappings.
type BlockDeviceMapping struct {
	DeviceName string    `json:"deviceName,omitempty" yaml:"deviceName"`
	RootVolume bool      `json:"rootVolume,omitempty" yaml:"rootVolume"`
	EBS        *EBSBlock `json:"ebs,omitempty" yaml:"ebs"`
}

// EBSBlock is the ebs part of a block device mapping.
type EBSBlock struct {
	Encrypted  *bool  `json:"encrypted,omitempty" yaml:"encrypted"`
	KMSKeyID   string `json:"kmsKeyID,omitempty" yaml:"kmsKeyID"`
	VolumeSize string `json:"volumeSize,omitempty" yaml:"volumeSize"`
	VolumeType string `json:"volumeType,omitempty" yaml:"volumeType"`
}

// NodePool is the typed view of a karpenter.sh NodePool (v1 or v1beta1).
type NodePool struct {
	Metadata Metadata     `json:"metadata,omitempty" yaml:"metadata"`
	Spec     NodePoolSpec `json:"spec,omitempty" yaml:"spec"`
}

// NodePoolSpec holds the NodePool fields the rules read.
type NodePoolSpec struct {
	Template   NodeClaimTemplate `json:"template,omitempty" yaml:"template"`
	Disruption *Disruption       `json:"disruption,omitempty" yaml:"disruption"`
	Limits     map[string]any    `json:"limits,omitempty" yaml:"limits"`
	Weight     *int32            `json:"weight,omitempty" yaml:"weight"`
}

// NodeClaimTemplate is spec.template of a NodePool.
type NodeClaimTemplate struct {
	Metadata Metadata      `json:"metadata,omitempty" yaml:"metadata"`
	Spec     NodeClaimSpec `json:"spec,omitempty" yaml:"spec"`
}

// NodeClaimSpec is spec.template.spec of a NodePool.
type NodeClaimSpec struct {
	NodeClassRef *NodeClassRef  `json:"nodeClassRef,omitempty" yaml:"nodeClassRef"`
	Requirements []Requirement  `json:"requirements,omitempty" yaml:"requirements"`
	ExpireAfter  string         `json:"expireAfter,omitempty" yaml:"expireAfter"`
	Kubelet      map[string]any `json:"kubelet,omitempty" yaml:"kubelet"`
}

// NodeClassRef points a NodePool at its node class. v1 uses group; v1beta1 used apiVersion.
type NodeClassRef struct {
	Group      string `json:"group,omitempty" yaml:"group"`
	APIVersion string `json:"apiVersion,omitempty" yaml:"apiVersion"`
	Kind       string `json:"kind,omitempty" yaml:"kind"`
	Name       string `json:"name,omitempty" yaml:"name"`
}

// Requirement is a node selector requirement of a NodePool.
type Requirement struct {
	Key       string   `json:"key,omitempty" yaml:"key"`
	Operator  string   `json:"operator,omitempty" yaml:"operator"`
	Values    []string `json:"values,omitempty" yaml:"values"`
	MinValues *int     `json:"minValues,omitempty" yaml:"minValues"`
}

// Disruption is spec.disruption of a NodePool.
type Disruption struct {
	ConsolidationPolicy string `json:"consolidationPolicy,omitempty" yaml:"consolidationPolicy"`
	ConsolidateAfter    string `json:"consolidateAfter,omitempty" yaml:"consolidateAfter"`
	ExpireAfter         string `json:"expireAfter,omitempty" yaml:"expireAfter"`
}

// ConfigMap is the typed view of the kube-system/aws-auth ConfigMap.
type ConfigMap struct {
	Metadata Metadata `json:"metadata,omitempty" yaml:"metadata"`
	// Data is kept untyped so that a value written as a YAML list instead of a string is reported by
	// aws-auth-malformed, not refused as unreadable input.
	Data map[string]any `json:"data,omitempty" yaml:"data"`
}
