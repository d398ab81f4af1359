package scheduling

// The label keys this package computes, as Karpenter spells them.
const (
	LabelInstanceType            = "node.kubernetes.io/instance-type"
	LabelArch                    = "kubernetes.io/arch"
	LabelOS                      = "kubernetes.io/os"
	LabelWindowsBuild            = "node.kubernetes.io/windows-build"
	LabelZone                    = "topology.kubernetes.io/zone"
	LabelZoneID                  = "topology.k8s.aws/zone-id"
	LabelRegion                  = "topology.kubernetes.io/region"
	LabelCapacityType            = "karpenter.sh/capacity-type"
	LabelCPU                     = "karpenter.k8s.aws/instance-cpu"
	LabelMemory                  = "karpenter.k8s.aws/instance-memory"
	LabelCPUManufacturer         = "karpenter.k8s.aws/instance-cpu-manufacturer"
	LabelCPUSustainedClockSpeed  = "karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz"
	LabelCategory                = "karpenter.k8s.aws/instance-category"
	LabelGeneration              = "karpenter.k8s.aws/instance-generation"
	LabelFamily                  = "karpenter.k8s.aws/instance-family"
	LabelSize                    = "karpenter.k8s.aws/instance-size"
	LabelCapabilityFlex          = "karpenter.k8s.aws/instance-capability-flex"
	LabelHypervisor              = "karpenter.k8s.aws/instance-hypervisor"
	LabelEncryptionInTransit     = "karpenter.k8s.aws/instance-encryption-in-transit-supported"
	LabelLocalNVMe               = "karpenter.k8s.aws/instance-local-nvme"
	LabelEBSBandwidth            = "karpenter.k8s.aws/instance-ebs-bandwidth"
	LabelGPUName                 = "karpenter.k8s.aws/instance-gpu-name"
	LabelGPUManufacturer         = "karpenter.k8s.aws/instance-gpu-manufacturer"
	LabelGPUCount                = "karpenter.k8s.aws/instance-gpu-count"
	LabelGPUMemory               = "karpenter.k8s.aws/instance-gpu-memory"
	LabelAcceleratorName         = "karpenter.k8s.aws/instance-accelerator-name"
	LabelAcceleratorManufacturer = "karpenter.k8s.aws/instance-accelerator-manufacturer"
	LabelAcceleratorCount        = "karpenter.k8s.aws/instance-accelerator-count"
	LabelTenancy                 = "karpenter.k8s.aws/instance-tenancy"
)

// The deprecated aliases Karpenter normalizes.
const (
	labelBetaZone     = "failure-domain.beta.kubernetes.io/zone"
	labelBetaRegion   = "failure-domain.beta.kubernetes.io/region"
	labelBetaArch     = "beta.kubernetes.io/arch"
	labelBetaOS       = "beta.kubernetes.io/os"
	labelBetaInstType = "beta.kubernetes.io/instance-type"
)

// Values of labels, of DescribeInstanceTypes fields and of the class's AMI family.
const (
	capacityOnDemand   = "on-demand"
	capacitySpot       = "spot"
	capacityReserved   = "reserved"
	tenancyDefault     = "default"
	tenancyDedicated   = "dedicated"
	archAMD64          = "amd64"
	archARM64          = "arm64"
	osLinux            = "linux"
	osWindows          = "windows"
	familyAL2023       = "AL2023"
	familyWindows2019  = "Windows2019"
	familyWindows2022  = "Windows2022"
	familyWindows2025  = "Windows2025"
	buildWindows2019   = "10.0.17763"
	buildWindows2022   = "10.0.20348"
	buildWindows2025   = "10.0.26100"
	awsArchX86         = "x86_64"
	awsArchARM         = "arm64"
	neuronManufacturer = "aws"
)

// key identifies a computable label; the order is the order Labels lists them in.
type key uint8

const (
	keyInstanceType key = iota
	keyArch
	keyOS
	keyWindowsBuild
	keyZone
	keyZoneID
	keyRegion
	keyCapacityType
	keyCPU
	keyMemory
	keyCPUMaker
	keyClockSpeed
	keyCategory
	keyGeneration
	keyFamily
	keySize
	keyFlex
	keyHypervisor
	keyEncryption
	keyLocalNVMe
	keyEBSBandwidth
	keyGPUName
	keyGPUMaker
	keyGPUCount
	keyGPUMemory
	keyAccelName
	keyAccelMaker
	keyAccelCount
	keyTenancy
	numKeys
)

// keyOf returns the computable label a (normalized) key names. A switch rather than a map keeps the
// package free of package-level state.
func keyOf(name string) (key, bool) {
	switch name {
	case LabelInstanceType:
		return keyInstanceType, true
	case LabelArch:
		return keyArch, true
	case LabelOS:
		return keyOS, true
	case LabelWindowsBuild:
		return keyWindowsBuild, true
	case LabelZone:
		return keyZone, true
	case LabelZoneID:
		return keyZoneID, true
	case LabelRegion:
		return keyRegion, true
	case LabelCapacityType:
		return keyCapacityType, true
	case LabelCPU:
		return keyCPU, true
	case LabelMemory:
		return keyMemory, true
	case LabelCPUManufacturer:
		return keyCPUMaker, true
	case LabelCPUSustainedClockSpeed:
		return keyClockSpeed, true
	case LabelCategory:
		return keyCategory, true
	case LabelGeneration:
		return keyGeneration, true
	case LabelFamily:
		return keyFamily, true
	case LabelSize:
		return keySize, true
	case LabelCapabilityFlex:
		return keyFlex, true
	case LabelHypervisor:
		return keyHypervisor, true
	case LabelEncryptionInTransit:
		return keyEncryption, true
	case LabelLocalNVMe:
		return keyLocalNVMe, true
	case LabelEBSBandwidth:
		return keyEBSBandwidth, true
	case LabelGPUName:
		return keyGPUName, true
	case LabelGPUManufacturer:
		return keyGPUMaker, true
	case LabelGPUCount:
		return keyGPUCount, true
	case LabelGPUMemory:
		return keyGPUMemory, true
	case LabelAcceleratorName:
		return keyAccelName, true
	case LabelAcceleratorManufacturer:
		return keyAccelMaker, true
	case LabelAcceleratorCount:
		return keyAccelCount, true
	case LabelTenancy:
		return keyTenancy, true
	}
	return 0, false
}

// name returns the label key k stands for.
func (k key) name() string {
	return [numKeys]string{
		LabelInstanceType, LabelArch, LabelOS, LabelWindowsBuild, LabelZone, LabelZoneID, LabelRegion,
		LabelCapacityType, LabelCPU, LabelMemory, LabelCPUManufacturer, LabelCPUSustainedClockSpeed, LabelCategory,
		LabelGeneration, LabelFamily, LabelSize, LabelCapabilityFlex, LabelHypervisor, LabelEncryptionInTransit,
		LabelLocalNVMe, LabelEBSBandwidth, LabelGPUName, LabelGPUManufacturer, LabelGPUCount, LabelGPUMemory,
		LabelAcceleratorName, LabelAcceleratorManufacturer, LabelAcceleratorCount, LabelTenancy,
	}[k]
}

// Computable reports whether rules may judge a requirement on key (normalized, see NormalizeKey): the
// labels this package computes. Any other key is ignored, never a reason to deny: the ones Karpenter
// takes from elsewhere (instance-network-bandwidth from a table scraped from the EC2 docs,
// nitro-sandbox, placement groups, capacity reservations), karpenter.sh/nodepool,
// karpenter.k8s.aws/ec2nodeclass, kubernetes.io/hostname and custom labels.
func Computable(key string) bool {
	_, ok := keyOf(key)
	return ok
}

// NormalizeKey returns the key Karpenter uses for a deprecated alias (beta.kubernetes.io/arch →
// kubernetes.io/arch, failure-domain.beta.kubernetes.io/zone → topology.kubernetes.io/zone, and the
// os, instance-type and region aliases), else key.
func NormalizeKey(key string) string {
	switch key {
	case labelBetaZone:
		return LabelZone
	case labelBetaRegion:
		return LabelRegion
	case labelBetaArch:
		return LabelArch
	case labelBetaOS:
		return LabelOS
	case labelBetaInstType:
		return LabelInstanceType
	}
	return key
}

// needsBasics reports whether k's value depends on a type's architecture, usable zones or capacity types.
func (k key) needsBasics() bool {
	switch k {
	case keyArch, keyOS, keyZone, keyZoneID, keyCapacityType:
		return true
	}
	return false
}
