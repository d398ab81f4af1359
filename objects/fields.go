package objects

import (
	"sort"

	yaml "go.yaml.in/yaml/v3"
)

// Fields reads an object's fields by path and says where they are, whichever source the object came
// from: a manifest file (YAML nodes, with lines and key order) or JSON from the API server (plain
// values, without lines). Rules read the typed views and ask Fields only what a view cannot say:
// whether a field is present at all, the keys a term really holds, the line a finding points at.
//
// A path is a list of mapping keys (string) and list indexes (int), as Path renders them.
type Fields interface {
	// Has reports whether the field at path is present, even when its value is null.
	Has(path ...any) bool
	// Value returns the field at path as JSON-like Go values (string, bool, a number, map[string]any,
	// []any), or nil when it is absent or null.
	Value(path ...any) any
	// Keys returns the keys of the mapping at path: in source order where the source keeps one,
	// sorted otherwise; nil when the field is not a mapping.
	Keys(path ...any) []string
	// Len returns the number of items of the list at path, 0 when the field is not a list.
	Len(path ...any) int
	// Line returns the file line of the field at path (the key's line for a mapping entry, the item's
	// for a list item, the nearest present parent's when the field is absent), or 0 when the source has
	// no lines.
	Line(path ...any) int
	// TextLine returns the file line of line n (from 1) of the string at path: where in a multi-line
	// value (aws-auth's mapRoles, userData) a problem is; 0 when the source has no lines.
	TextLine(n int, path ...any) int
	// Node returns the field at path as a YAML node without position, to copy into an edit; nil when
	// the field is absent.
	Node(path ...any) *yaml.Node
}

// Tree is the Fields of an object read from a YAML (or JSON) file: its node tree, whose lines are
// shifted by LineOffset to file lines.
type Tree struct {
	Root       *yaml.Node
	LineOffset int
}

var _ Fields = Tree{}

// Has implements Fields.
func (t Tree) Has(path ...any) bool {
	if len(path) == 0 {
		return t.Root != nil
	}
	parent := Lookup(t.Root, path[:len(path)-1]...)
	switch last := path[len(path)-1].(type) {
	case string:
		k, _ := MapEntry(parent, last)
		return k != nil
	case int:
		return Lookup(parent, last) != nil
	}
	return false
}

// Value implements Fields.
func (t Tree) Value(path ...any) any {
	n := Lookup(t.Root, path...)
	if IsNull(n) {
		return nil
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return n.Value
	}
	return v
}

// Keys implements Fields.
func (t Tree) Keys(path ...any) []string {
	m := Lookup(t.Root, path...)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	out := make([]string, 0, len(m.Content)/2)
	for i := 0; i+1 < len(m.Content); i += 2 {
		out = append(out, m.Content[i].Value)
	}
	return out
}

// Len implements Fields.
func (t Tree) Len(path ...any) int {
	if s := Lookup(t.Root, path...); s != nil && s.Kind == yaml.SequenceNode {
		return len(s.Content)
	}
	return 0
}

// Line implements Fields.
func (t Tree) Line(path ...any) int {
	for len(path) > 0 {
		parent := Lookup(t.Root, path[:len(path)-1]...)
		switch last := path[len(path)-1].(type) {
		case string:
			if k, _ := MapEntry(parent, last); k != nil {
				return t.lineOf(k)
			}
		case int:
			if n := Lookup(parent, last); n != nil {
				return t.lineOf(n)
			}
		}
		path = path[:len(path)-1]
	}
	return t.lineOf(t.Root)
}

func (t Tree) lineOf(n *yaml.Node) int {
	if n == nil || n.Line == 0 {
		return 0
	}
	return t.LineOffset + n.Line
}

// TextLine implements Fields: a block scalar's text starts on the line after its key, a quoted or
// plain one on the key's line.
func (t Tree) TextLine(n int, path ...any) int {
	v := Lookup(t.Root, path...)
	if v == nil {
		return t.Line(path...)
	}
	if v.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return t.lineOf(v) + n
	}
	return t.lineOf(v) + n - 1
}

// Node implements Fields: a deep copy without positions, comments or flow style, so that it renders
// cleanly where an edit puts it.
func (t Tree) Node(path ...any) *yaml.Node {
	n := Lookup(t.Root, path...)
	if n == nil && !t.Has(path...) {
		return nil
	}
	return copyNode(n)
}

func copyNode(n *yaml.Node) *yaml.Node {
	if n == nil {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
	}
	if n.Kind == yaml.AliasNode {
		return copyNode(n.Alias)
	}
	c := &yaml.Node{Kind: n.Kind, Style: n.Style &^ yaml.FlowStyle, Tag: n.Tag, Value: n.Value}
	for _, ch := range n.Content {
		c.Content = append(c.Content, copyNode(ch))
	}
	return c
}

// Map is the Fields of an object read from JSON or from the cluster's cache: the plain values that
// encoding/json and apimachinery's unstructured objects hold. It has no lines.
type Map map[string]any

var _ Fields = Map(nil)

// lookup walks path through plain values; ok is false when a step is missing.
func (m Map) lookup(path ...any) (v any, ok bool) {
	v = map[string]any(m)
	if m == nil {
		return nil, false
	}
	for _, p := range path {
		switch key := p.(type) {
		case string:
			mm, isMap := v.(map[string]any)
			if !isMap {
				return nil, false
			}
			if v, ok = mm[key]; !ok {
				return nil, false
			}
		case int:
			s, isList := v.([]any)
			if !isList || key < 0 || key >= len(s) {
				return nil, false
			}
			v = s[key]
		default:
			return nil, false
		}
	}
	return v, true
}

// Has implements Fields.
func (m Map) Has(path ...any) bool {
	_, ok := m.lookup(path...)
	return ok
}

// Value implements Fields.
func (m Map) Value(path ...any) any {
	v, _ := m.lookup(path...)
	return v
}

// Keys implements Fields: sorted, as JSON objects have no order a decoded map keeps.
func (m Map) Keys(path ...any) []string {
	v, _ := m.lookup(path...)
	mm, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(mm))
	for k := range mm {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Len implements Fields.
func (m Map) Len(path ...any) int {
	v, _ := m.lookup(path...)
	s, _ := v.([]any)
	return len(s)
}

// Line implements Fields: JSON from the API server has no lines worth pointing at.
func (m Map) Line(...any) int { return 0 }

// TextLine implements Fields.
func (m Map) TextLine(int, ...any) int { return 0 }

// Node implements Fields.
func (m Map) Node(path ...any) *yaml.Node {
	v, ok := m.lookup(path...)
	if !ok {
		return nil
	}
	var n yaml.Node
	if err := n.Encode(v); err != nil {
		return nil
	}
	return &n
}
