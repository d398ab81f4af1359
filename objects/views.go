package objects

// Metadata is the part of ObjectMeta the rules read.
type Metadata struct {
	Name        string            `yaml:"name"`
	Namespace   string            `yaml:"namespace"`
	Annotations map[string]string `yaml:"annotations"`
	Labels      map[string]string `yaml:"labels"`
}

// EC2NodeClass is the typed view of a karpenter.k8s.aws EC2NodeClass (v1 or v1beta1).
type EC2NodeClass struct {
	Metadata Metadata         `yaml:"metadata"`
	Spec     EC2NodeClassSpec `yaml:"spec"`
}

// EC2NodeClassSpec holds the EC2NodeClass fields the rules read.
type EC2NodeClassSpec struct {
	AMIFamily                  string               `yaml:"amiFamily"`
	AMISelectorTerms           []AMISelectorTerm    `yaml:"amiSelectorTerms"`
	SubnetSelectorTerms        []SelectorTerm       `yaml:"subnetSelectorTerms"`
	SecurityGroupSelectorTerms []SelectorTerm       `yaml:"securityGroupSelectorTerms"`
	Role                       string               `yaml:"role"`
	InstanceProfile            string               `yaml:"instanceProfile"`
	UserData                   *string              `yaml:"userData"`
	MetadataOptions            *MetadataOptions     `yaml:"metadataOptions"`
	BlockDeviceMappings        []BlockDeviceMapping `yaml:"blockDeviceMappings"`
	AssociatePublicIPAddress   *bool                `yaml:"associatePublicIPAddress"`
	Kubelet                    map[string]any       `yaml:"kubelet"`
}

// AMISelectorTerm is one term of spec.amiSelectorTerms; fields are ANDed, terms ORed.
type AMISelectorTerm struct {
	Alias        string            `yaml:"alias"`
	ID           string            `yaml:"id"`
	Name         string            `yaml:"name"`
	Owner        string            `yaml:"owner"`
	SSMParameter string            `yaml:"ssmParameter"`
	Tags         map[string]string `yaml:"tags"`
}

// SelectorTerm is one term of a subnet or security-group selector.
type SelectorTerm struct {
	ID   string            `yaml:"id"`
	Name string            `yaml:"name"`
	Tags map[string]string `yaml:"tags"`
}

// MetadataOptions is spec.metadataOptions (IMDS settings).
type MetadataOptions struct {
	HTTPEndpoint            string `yaml:"httpEndpoint"`
	HTTPTokens              string `yaml:"httpTokens"`
	HTTPPutResponseHopLimit *int64 `yaml:"httpPutResponseHopLimit"`
}

// BlockDeviceMapping is one entry of spec.blockDeviceMappings.
type BlockDeviceMapping struct {
	DeviceName string    `yaml:"deviceName"`
	RootVolume bool      `yaml:"rootVolume"`
	EBS        *EBSBlock `yaml:"ebs"`
}

// EBSBlock is the ebs part of a block device mapping.
type EBSBlock struct {
	Encrypted  *bool  `yaml:"encrypted"`
	VolumeSize string `yaml:"volumeSize"`
	VolumeType string `yaml:"volumeType"`
}

// NodePool is the typed view of a karpenter.sh NodePool (v1 or v1beta1).
type NodePool struct {
	Metadata Metadata     `yaml:"metadata"`
	Spec     NodePoolSpec `yaml:"spec"`
}

// NodePoolSpec holds the NodePool fields the rules read.
type NodePoolSpec struct {
	Template   NodeClaimTemplate `yaml:"template"`
	Disruption *Disruption       `yaml:"disruption"`
	Limits     map[string]any    `yaml:"limits"`
	Weight     *int32            `yaml:"weight"`
}

// NodeClaimTemplate is spec.template of a NodePool.
type NodeClaimTemplate struct {
	Metadata Metadata      `yaml:"metadata"`
	Spec     NodeClaimSpec `yaml:"spec"`
}

// NodeClaimSpec is spec.template.spec of a NodePool.
type NodeClaimSpec struct {
	NodeClassRef *NodeClassRef  `yaml:"nodeClassRef"`
	Requirements []Requirement  `yaml:"requirements"`
	ExpireAfter  string         `yaml:"expireAfter"`
	Kubelet      map[string]any `yaml:"kubelet"`
}

// NodeClassRef points a NodePool at its node class. v1 uses group; v1beta1 used apiVersion.
type NodeClassRef struct {
	Group      string `yaml:"group"`
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Name       string `yaml:"name"`
}

// Requirement is a node selector requirement of a NodePool.
type Requirement struct {
	Key       string   `yaml:"key"`
	Operator  string   `yaml:"operator"`
	Values    []string `yaml:"values"`
	MinValues *int     `yaml:"minValues"`
}

// Disruption is spec.disruption of a NodePool.
type Disruption struct {
	ConsolidationPolicy string `yaml:"consolidationPolicy"`
	ConsolidateAfter    string `yaml:"consolidateAfter"`
	ExpireAfter         string `yaml:"expireAfter"`
}

// ConfigMap is the typed view of the kube-system/aws-auth ConfigMap.
type ConfigMap struct {
	Metadata Metadata `yaml:"metadata"`
	// Data is kept untyped so that a value written as a YAML list instead of a string is reported by
	// aws-auth-malformed, not refused as unreadable input.
	Data map[string]any `yaml:"data"`
}
