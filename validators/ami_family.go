package validators

import (
	"strings"

	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/userdata"
)

// aliasFamilies maps an alias family (al2023) to its amiFamily (AL2023).
var aliasFamilies = map[string]string{
	"al2":          userdata.FamilyAL2,
	"al2023":       userdata.FamilyAL2023,
	"bottlerocket": userdata.FamilyBottlerocket,
	"windows2019":  userdata.FamilyWindows2019,
	"windows2022":  userdata.FamilyWindows2022,
	"windows2025":  userdata.FamilyWindows2025,
}

// alias returns the alias of an EC2NodeClass's amiSelectorTerms ("" when none) split into family and version.
func alias(nc *objects.EC2NodeClass) (family, version string, ok bool) {
	for _, t := range nc.Spec.AMISelectorTerms {
		if t.Alias != "" {
			family, version, _ = strings.Cut(t.Alias, "@")
			return family, version, true
		}
	}
	return "", "", false
}

// family returns the AMI family an EC2NodeClass boots: spec.amiFamily, else the alias's family.
func family(nc *objects.EC2NodeClass) string {
	if nc.Spec.AMIFamily != "" {
		return nc.Spec.AMIFamily
	}
	if f, _, ok := alias(nc); ok {
		return aliasFamilies[strings.ToLower(f)]
	}
	return ""
}
