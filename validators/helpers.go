package validators

import (
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/userdata"
)

// lineAt returns the file line of the field at path: the key's line for a mapping entry, the item's
// line for a sequence index, the nearest existing parent's line when the field is absent.
func lineAt(o *objects.Object, path ...any) int {
	for len(path) > 0 {
		parent := objects.Lookup(o.Root, path[:len(path)-1]...)
		switch last := path[len(path)-1].(type) {
		case string:
			if k, _ := objects.MapEntry(parent, last); k != nil {
				return o.LineOf(k)
			}
		case int:
			if n := objects.Lookup(parent, last); n != nil {
				return o.LineOf(n)
			}
		}
		path = path[:len(path)-1]
	}
	return o.LineOf(o.Root)
}

// has reports whether the field at path is present (even when null).
func has(o *objects.Object, path ...any) bool {
	if len(path) == 0 {
		return true
	}
	parent := objects.Lookup(o.Root, path[:len(path)-1]...)
	switch last := path[len(path)-1].(type) {
	case string:
		k, _ := objects.MapEntry(parent, last)
		return k != nil
	case int:
		return objects.Lookup(parent, last) != nil
	}
	return false
}

// keys returns the keys of the mapping at path, in order.
func keys(o *objects.Object, path ...any) []string {
	m := objects.Lookup(o.Root, path...)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	out := make([]string, 0, len(m.Content)/2)
	for i := 0; i+1 < len(m.Content); i += 2 {
		out = append(out, m.Content[i].Value)
	}
	return out
}

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
