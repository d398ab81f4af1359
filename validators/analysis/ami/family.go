package ami

import (
	"strings"

	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/userdata"
)

// AliasFamilies maps an alias family (al2023) to its amiFamily (AL2023).
var AliasFamilies = map[string]string{
	"al2":          userdata.FamilyAL2,
	"al2023":       userdata.FamilyAL2023,
	"bottlerocket": userdata.FamilyBottlerocket,
	"windows2019":  userdata.FamilyWindows2019,
	"windows2022":  userdata.FamilyWindows2022,
	"windows2025":  userdata.FamilyWindows2025,
}

// Alias returns the Alias of an EC2NodeClass's amiSelectorTerms ("" when none) split into family and version.
func Alias(nc *objects.EC2NodeClass) (family, version string, ok bool) {
	for _, t := range nc.Spec.AMISelectorTerms {
		if t.Alias != "" {
			family, version, _ = strings.Cut(t.Alias, "@")
			return family, version, true
		}
	}
	return "", "", false
}

// Family returns the AMI Family an EC2NodeClass boots: spec.amiFamily, else the alias's Family.
func Family(nc *objects.EC2NodeClass) string {
	if nc.Spec.AMIFamily != "" {
		return nc.Spec.AMIFamily
	}
	if f, _, ok := Alias(nc); ok {
		return AliasFamilies[strings.ToLower(f)]
	}
	return ""
}

// BootFamily returns the family whose boot agent reads an EC2NodeClass's userData: its family, except
// that amiFamily Custom over bottlerocket aliases only boots Bottlerocket, which reads userData as TOML
// settings whatever amiFamily says (Karpenter then passes the userData through unmerged).
func BootFamily(nc *objects.EC2NodeClass) string {
	fam := Family(nc)
	if fam != userdata.FamilyCustom || len(nc.Spec.AMISelectorTerms) == 0 {
		return fam
	}
	for _, t := range nc.Spec.AMISelectorTerms {
		f, _, _ := strings.Cut(t.Alias, "@")
		if AliasFamilies[strings.ToLower(f)] != userdata.FamilyBottlerocket {
			return fam // an image Karpenter does not name: its boot agent is unknown
		}
	}
	return userdata.FamilyBottlerocket
}

// PinnedAlias returns an example of a pinned release of an alias family ("al2023" → al2023@v20251112),
// written the way ami-alias-version-format accepts it, or "" for a family that only has latest (Windows).
// Every suggestion to pin a release uses it, so no fix suggests an alias another rule denies.
func PinnedAlias(aliasFamily string) string {
	switch strings.ToLower(aliasFamily) {
	case "al2", "al2023":
		return strings.ToLower(aliasFamily) + "@v20251112"
	case "bottlerocket":
		return "bottlerocket@v1.26.1"
	}
	return ""
}

// DefaultAlias returns the alias that reproduces a v1beta1 family's default AMIs, or "".
func DefaultAlias(fam string) string {
	for a, f := range AliasFamilies {
		if f == fam {
			return a + "@latest"
		}
	}
	return ""
}

// ImageFamily recognises the EKS-optimized name patterns of docs/design.md §4 ("" for other images).
func ImageFamily(name string) string {
	switch {
	case strings.HasPrefix(name, "amazon-eks-node-al2023-"):
		return userdata.FamilyAL2023
	case strings.HasPrefix(name, "amazon-eks-node-"), strings.HasPrefix(name, "amazon-eks-arm64-node-"), strings.HasPrefix(name, "amazon-eks-gpu-node-"):
		return userdata.FamilyAL2
	case strings.HasPrefix(name, "bottlerocket-aws-k8s-"):
		return userdata.FamilyBottlerocket
	case strings.HasPrefix(name, "Windows_Server-") && strings.Contains(name, "EKS_Optimized"):
		// Windows_Server-2022-English-Core-EKS_Optimized-1.33-…: each Windows family is its release.
		year, _, _ := strings.Cut(strings.TrimPrefix(name, "Windows_Server-"), "-")
		switch fam := "Windows" + year; fam {
		case userdata.FamilyWindows2019, userdata.FamilyWindows2022, userdata.FamilyWindows2025:
			return fam
		}
		return anyWindows
	}
	return ""
}

// anyWindows is ImageFamily's answer for an EKS-optimized Windows image of a release it does not know.
const anyWindows = "Windows"

// SameFamily reports whether an image of family imageFam (imageFamily's answer) boots under amiFamily.
func SameFamily(imageFam, amiFamily string) bool {
	if imageFam == anyWindows {
		return userdata.IsWindows(amiFamily)
	}
	return imageFam == amiFamily
}
