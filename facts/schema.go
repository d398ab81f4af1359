package facts

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"
)

// yaml.v3 cannot decode a node strictly, and even its strict decoder accepts yes/no/on/off (quoted or
// not) for booleans, numbers for strings, and reports a bad timestamp without a line. schemaChecker
// walks the parsed nodes against the Go types of the snapshot instead, so every unknown field and wrong
// type is refused with the line of the very node that is wrong.

type schemaChecker struct {
	offset int
	errs   []*SnapshotError
	// seen holds the (node, type) pairs checked: an aliased node is checked once, which also stops
	// alias cycles and exponential alias expansion.
	seen map[schemaKey]bool
}

type schemaKey struct {
	n *yaml.Node
	t reflect.Type
}

var timeType = reflect.TypeOf(time.Time{})

func (c *schemaChecker) errorf(n *yaml.Node, format string, args ...any) {
	c.errs = append(c.errs, &SnapshotError{Line: c.offset + max(n.Line, 1), Message: fmt.Sprintf(format, args...)})
}

// check reports every problem of n (at path, "" for the document) against the Go type t.
func (c *schemaChecker) check(n *yaml.Node, t reflect.Type, path string) {
	for i := 0; n.Kind == yaml.AliasNode && i < 100; i++ {
		if n.Alias == nil {
			c.errorf(n, "%s: unresolved alias", pathOrDoc(path))
			return
		}
		n = n.Alias
	}
	if c.seen == nil {
		c.seen = map[schemaKey]bool{}
	}
	if k := (schemaKey{n, t}); c.seen[k] {
		return
	}
	c.seen[schemaKey{n, t}] = true
	if n.Kind == yaml.ScalarNode && n.Style&yaml.TaggedStyle != 0 {
		// An explicit tag the value does not fit (!!bool yes, !!timestamp soon) fails in yaml.v3's
		// decoding without a line: try it on the node alone.
		var v any
		if err := n.Decode(&v); err != nil {
			c.errorf(n, "%s: %q tagged %s: %s", pathOrDoc(path), n.Value, n.Tag, strings.TrimPrefix(err.Error(), "yaml: "))
			return
		}
	}
	if t.Kind() == reflect.Pointer {
		if isNull(n) {
			c.errorf(n, "%s has no value: expected %s; leave %s out when it is unknown", path, expected(t.Elem()), path)
			return
		}
		t = t.Elem()
	}
	switch {
	case t == timeType:
		if n.Kind != yaml.ScalarNode {
			c.errorf(n, "%s: %s: expected %s", path, describe(n), expected(t))
			return
		}
		switch n.ShortTag() {
		case "!!null", "!!timestamp":
		case "!!str":
			if err := new(time.Time).UnmarshalText([]byte(n.Value)); err != nil {
				c.errorf(n, "%s: %s is not a timestamp: expected %s", path, describe(n), expected(t))
			}
		default:
			c.errorf(n, "%s: %s: expected %s", path, describe(n), expected(t))
		}
	case t.Kind() == reflect.Struct:
		if n.Kind != yaml.MappingNode {
			c.errorf(n, "%s: %s: expected %s", pathOrDoc(path), describe(n), expected(t))
			return
		}
		fields := yamlFields(t)
		c.mapping(n, path, func(key, value *yaml.Node) {
			f, ok := fields[key.Value]
			if !ok {
				c.errorf(key, "unknown field %q in %s: expected %s%s", key.Value, pathOrDoc(path), fieldList(t), didYouMean(key.Value, t))
				return
			}
			c.check(value, f.Type, join(path, key.Value))
		}, func(merged *yaml.Node) { c.check(merged, t, path) })
	case t.Kind() == reflect.Slice:
		if isNull(n) {
			return
		}
		if n.Kind != yaml.SequenceNode {
			c.errorf(n, "%s: %s: expected %s", path, describe(n), expected(t))
			return
		}
		for i, e := range n.Content {
			c.check(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
		}
	case t.Kind() == reflect.Map:
		if isNull(n) {
			return
		}
		if n.Kind != yaml.MappingNode {
			c.errorf(n, "%s: %s: expected %s", path, describe(n), expected(t))
			return
		}
		c.mapping(n, path, func(key, value *yaml.Node) {
			c.check(value, t.Elem(), fmt.Sprintf("%s[%q]", path, key.Value))
		}, func(merged *yaml.Node) { c.check(merged, t, path) })
	case t.Kind() == reflect.String:
		if n.Kind != yaml.ScalarNode {
			c.errorf(n, "%s: %s: expected %s", path, describe(n), expected(t))
			return
		}
		switch n.ShortTag() {
		case "!!str", "!!null", "!!timestamp":
		case "!!int", "!!float", "!!bool":
			c.errorf(n, "%s: %s: expected a string (quote it: %q)", path, describe(n), n.Value)
		default:
			c.errorf(n, "%s: %s: expected a string", path, describe(n))
		}
	case t.Kind() == reflect.Bool:
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
			c.errorf(n, "%s: %s: expected %s", path, describe(n), expected(t))
		}
	case t.Kind() == reflect.Int:
		// yaml.v3 decodes 1e3 and 0x10 into an int too; a count is written in decimal digits.
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
			c.errorf(n, "%s: %s: expected %s", path, describe(n), expected(t))
			return
		}
		if v, err := strconv.Atoi(n.Value); err != nil || v < 0 || strconv.Itoa(v) != strings.TrimPrefix(n.Value, "+") {
			c.errorf(n, "%s: %s: expected %s", path, describe(n), expected(t))
		}
	default:
		c.errorf(n, "%s: cannot check a %s", path, t)
	}
}

// mapping checks the keys of a mapping node: strings, each once; merge keys (<<) are followed.
func (c *schemaChecker) mapping(n *yaml.Node, path string, entry func(key, value *yaml.Node), merge func(*yaml.Node)) {
	first := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, value := n.Content[i], n.Content[i+1]
		if key.Kind == yaml.ScalarNode && key.Value == "<<" && key.ShortTag() == "!!merge" {
			c.merge(value, merge)
			continue
		}
		if key.Kind != yaml.ScalarNode || key.ShortTag() != "!!str" {
			c.errorf(key, "%s: key %s: expected a string key", pathOrDoc(path), describe(key))
			continue
		}
		if prev, dup := first[key.Value]; dup {
			c.errorf(key, "%s: key %q appears twice (first at line %d)", pathOrDoc(path), key.Value, c.offset+prev.Line)
			continue
		}
		first[key.Value] = key
		entry(key, value)
	}
}

// merge follows the value of a merge key: a mapping, or a list of mappings, each possibly an alias.
func (c *schemaChecker) merge(v *yaml.Node, merge func(*yaml.Node)) {
	resolve := func(n *yaml.Node) *yaml.Node {
		for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
			n = n.Alias
		}
		return n
	}
	switch {
	case resolve(v).Kind == yaml.MappingNode:
		merge(v)
	case v.Kind == yaml.SequenceNode: // written out: yaml.v3 refuses an alias to a list here
		for _, e := range v.Content {
			if resolve(e).Kind != yaml.MappingNode {
				c.errorf(e, "merge key (<<): %s: expected a mapping", describe(e))
				continue
			}
			merge(e)
		}
	default:
		c.errorf(v, "merge key (<<): %s: expected a mapping or a list of mappings", describe(v))
	}
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

// describe names what a node is, for messages: the value of a scalar with its type, else its kind.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	case yaml.AliasNode:
		if n.Alias != nil && n.Alias.Kind != yaml.AliasNode {
			return "an alias to " + describe(n.Alias)
		}
		return "an alias"
	case yaml.DocumentNode:
		return "a document"
	}
	v := n.Value
	if r := []rune(v); len(r) > 40 {
		v = string(r[:37]) + "..."
	}
	switch tag := n.ShortTag(); tag {
	case "!!str":
		return fmt.Sprintf("%q", v)
	case "!!null":
		return "null"
	case "!!int", "!!float":
		return v + " (a number)"
	case "!!bool":
		return v + " (a boolean)"
	case "!!timestamp":
		return v + " (a timestamp)"
	default:
		return fmt.Sprintf("%q (tagged %s)", v, tag)
	}
}

// expected describes a Go type of the snapshot in the words of its YAML.
func expected(t reflect.Type) string {
	switch {
	case t == timeType:
		return `a timestamp such as "2025-06-01T10:00:00Z"`
	case t.Kind() == reflect.Pointer:
		return expected(t.Elem())
	case t.Kind() == reflect.Struct:
		return "a mapping with " + fieldList(t)
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
		return "a list of strings; write [] when there are none"
	case t.Kind() == reflect.Slice:
		return "a list; write [] when there are none"
	case t.Kind() == reflect.Map && t.Elem().Kind() == reflect.Slice:
		return "a mapping of strings to lists of strings; write {} when there are none"
	case t.Kind() == reflect.Map:
		return "a mapping of strings to strings; write {} when there are none"
	case t.Kind() == reflect.Int:
		return "a whole number such as 5"
	case t.Kind() == reflect.Bool:
		return "true or false"
	case t.Kind() == reflect.String:
		return "a string"
	}
	return t.String()
}

// yamlFields returns a struct's fields by YAML name, those of inline structs included.
func yamlFields(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for _, f := range fieldsInOrder(t) {
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		out[name] = f
	}
	return out
}

// fieldsInOrder returns a struct's YAML fields in declaration order, an inline struct's in its place.
func fieldsInOrder(t reflect.Type) []reflect.StructField {
	var out []reflect.StructField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch {
		case name == "" && opts == "inline" && f.Type.Kind() == reflect.Struct:
			out = append(out, fieldsInOrder(f.Type)...)
		case name != "" && name != "-":
			out = append(out, f)
		}
	}
	return out
}

func fieldList(t reflect.Type) string {
	var names []string
	for _, f := range fieldsInOrder(t) {
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		names = append(names, name)
	}
	return strings.Join(names, ", ")
}

// didYouMean suggests the field a misspelt key (wrong case, or _ and - for nothing) stands for.
func didYouMean(key string, t reflect.Type) string {
	norm := func(s string) string { return strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(s)) }
	for name := range yamlFields(t) {
		if norm(name) == norm(key) {
			return fmt.Sprintf(" (did you mean %q?)", name)
		}
	}
	return ""
}

func join(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

func pathOrDoc(path string) string {
	if path == "" {
		return "ClusterFacts"
	}
	return path
}
