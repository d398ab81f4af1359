package validators

import (
	yaml "go.yaml.in/yaml/v3"

	"github.com/karpenter-guard/karpenter-guard/objects"
)

// Where a field of an object is, for the line a finding points at, and what it holds.

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
