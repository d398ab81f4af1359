package objects

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/karpenter-guard/karpenter-guard/internal/yamlpos"
)

// API groups and versions the tool recognises.
const (
	GroupKarpenterAWS = "karpenter.k8s.aws"
	GroupKarpenter    = "karpenter.sh"

	KindEC2NodeClass = "EC2NodeClass"
	KindNodePool     = "NodePool"
	KindConfigMap    = "ConfigMap"

	// KindClusterFacts is a karpenter-guard facts snapshot given in the input.
	KindClusterFacts = "ClusterFacts"
	FactsAPIVersion  = "karpenter-guard.io/v1alpha1"

	AWSAuthName      = "aws-auth"
	AWSAuthNamespace = "kube-system"
)

// Ref identifies an object in findings and reports.
type Ref struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	Namespace  string `json:"namespace,omitempty"`
	File       string `json:"file,omitempty"`
	Line       int    `json:"line,omitempty"`
}

// String renders the reference the way kubectl names objects: Kind "name".
func (r Ref) String() string {
	if r.Namespace != "" {
		return fmt.Sprintf("%s \"%s/%s\"", r.Kind, r.Namespace, r.Name)
	}
	return fmt.Sprintf("%s %q", r.Kind, r.Name)
}

// Object is one recognised Kubernetes object: its identity, its typed view, and where its fields are.
type Object struct {
	APIVersion  string
	Kind        string
	Name        string
	Namespace   string
	Annotations map[string]string

	// File is the path the object was read from ("" when it came from an admission request).
	File string
	// Fields reads the object's fields and says where they are, whatever the source: rules use it and
	// the views, never the source's nodes below.
	Fields Fields

	// Exactly one of the views is set, by Kind; none for a ClusterFacts document.
	NodeClass *EC2NodeClass
	NodePool  *NodePool
	AWSAuth   *ConfigMap

	// The rest is set only for objects read from a manifest file (Decode), for the CLI's --fix, which
	// edits the text: the object's mapping node (every field, known or not, with comments), the
	// offset from node lines to file lines, the root node of the YAML document the object came from
	// (the List for list items), the document's last line, and whether it was JSON (flow style).
	Root       *yaml.Node
	LineOffset int
	DocRoot    *yaml.Node
	DocEndLine int
	JSON       bool

	// derived holds Content and ContentDigest once computed. An Object must therefore not be modified
	// after decoding, nor copied.
	derived derived
}

// Ref returns the object's reference, positioned at its first line.
func (o *Object) Ref() Ref {
	line := 0
	if o.Fields != nil {
		line = o.Fields.Line()
	}
	return Ref{APIVersion: o.APIVersion, Kind: o.Kind, Name: o.Name, Namespace: o.Namespace, File: o.File, Line: line}
}

// LineOf returns the line in the object's file of a node of its Root (0 when unknown).
func (o *Object) LineOf(n *yaml.Node) int {
	if n == nil || n.Line == 0 {
		return 0
	}
	return o.LineOffset + n.Line
}

// Version returns the version part of apiVersion ("v1", "v1beta1").
func (o *Object) Version() string {
	_, v, _ := strings.Cut(o.APIVersion, "/")
	return v
}

// Group returns the group part of apiVersion ("" for the core group).
func (o *Object) Group() string {
	g, _, ok := strings.Cut(o.APIVersion, "/")
	if !ok {
		return ""
	}
	return g
}

// Lookup walks a path of mapping keys and sequence indexes (string and int elements) from n and returns
// the node found, or nil.
func Lookup(n *yaml.Node, path ...any) *yaml.Node {
	for _, p := range path {
		n = resolve(n)
		if n == nil {
			return nil
		}
		switch key := p.(type) {
		case string:
			_, n = MapEntry(n, key)
		case int:
			if n.Kind != yaml.SequenceNode || key < 0 || key >= len(n.Content) {
				return nil
			}
			n = n.Content[key]
		default:
			return nil
		}
	}
	return resolve(n)
}

// MapEntry returns the key and value nodes of key in mapping node m, or nils.
func MapEntry(m *yaml.Node, key string) (k, v *yaml.Node) {
	m = resolve(m)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i], resolve(m.Content[i+1])
		}
	}
	return nil, nil
}

// IsNull reports whether n is absent or an explicit null.
func IsNull(n *yaml.Node) bool {
	n = resolve(n)
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		return resolve(n.Content[0])
	}
	return n
}

// Path renders a field path from its elements: spec.amiSelectorTerms[1].owner.
func Path(elems ...any) string {
	var b strings.Builder
	for _, e := range elems {
		switch v := e.(type) {
		case int:
			b.WriteString("[" + strconv.Itoa(v) + "]")
		case string:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			if strings.ContainsAny(v, "./") {
				b.WriteString("'" + v + "'")
			} else {
				b.WriteString(v)
			}
		}
	}
	return b.String()
}

// ParsePath is the inverse of Path: "spec.amiSelectorTerms[1].owner" gives spec, amiSelectorTerms, 1,
// owner; quoted keys ('karpenter.sh/do-not-evict') stay whole. A malformed index ends the path there.
func ParsePath(s string) []any {
	var out []any
	for i := 0; i < len(s); {
		switch s[i] {
		case '.':
			i++
		case '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return append(out, s[i+1:])
			}
			out = append(out, s[i+1:i+1+end])
			i += end + 2
		case '[':
			end := strings.IndexByte(s[i:], ']')
			n, err := strconv.Atoi(s[i+1 : i+max(end, 1)])
			if end < 0 || err != nil {
				return out
			}
			out = append(out, n)
			i += end + 1
		default:
			end := strings.IndexAny(s[i:], ".[")
			if end < 0 {
				end = len(s) - i
			}
			out = append(out, s[i:i+end])
			i += end
		}
	}
	return out
}

var (
	definedAtRE = regexp.MustCompile(`already defined at line (\d+)`)
	unmarshalRE = regexp.MustCompile("cannot unmarshal !!(\\w+) (`[^`]*`|)\\s*into (\\S+)")
	yamlKinds   = map[string]string{"str": "the string", "int": "the number", "float": "the number", "bool": "the boolean",
		"map": "a mapping", "seq": "a list", "null": "null", "timestamp": "the timestamp"}
)

// expectation turns the Go type yaml.v3 names into what the YAML should have held.
func expectation(goType string) string {
	switch {
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	case strings.HasPrefix(goType, "map["), strings.HasPrefix(goType, "objects."):
		return "a mapping"
	case goType == "string":
		return "a string"
	case goType == "bool":
		return "true or false"
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "float"):
		return "a number"
	}
	return goType
}

// shiftLines rewrites the "line N:" prefixes of a yaml.v3 error to file lines.
func shiftLines(err error, offset int) string {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "yaml: unmarshal errors:\n")
	msg = strings.TrimPrefix(msg, "yaml: ")
	msg = yamlpos.LineRE.ReplaceAllStringFunc(msg, func(s string) string {
		n, _ := strconv.Atoi(yamlpos.LineRE.FindStringSubmatch(s)[1])
		return fmt.Sprintf("line %d:", n+offset)
	})
	msg = definedAtRE.ReplaceAllStringFunc(msg, func(s string) string {
		n, _ := strconv.Atoi(definedAtRE.FindStringSubmatch(s)[1])
		return fmt.Sprintf("already defined at line %d", n+offset)
	})
	msg = unmarshalRE.ReplaceAllStringFunc(msg, func(s string) string {
		m := unmarshalRE.FindStringSubmatch(s)
		return fmt.Sprintf("expected %s, found %s %s", expectation(m[3]), yamlKinds[m[1]], m[2])
	})
	lines := strings.Split(msg, "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.Join(lines, "; ")
}

// Content returns the object as the API server receives it from kubectl: plain JSON values (int64 and
// float64 numbers), computed once. An object from JSON or the cluster's cache returns its own map; one
// read from a file is converted the way kubectl converts YAML (sigs.k8s.io/yaml, whose YAML 1.1 reading
// takes an unquoted yes as true), aliases resolved, and keeps the result. Either way the map is shared
// and must not be modified.
func (o *Object) Content() (map[string]any, error) {
	if m, ok := o.Fields.(Map); ok {
		return m, nil
	}
	o.derived.contentOnce.Do(func() {
		o.derived.content, o.derived.contentErr = o.convertContent()
	})
	return o.derived.content, o.derived.contentErr
}

// convertContent converts the object's tree to plain JSON values (see Content).
func (o *Object) convertContent() (map[string]any, error) {
	t, ok := o.Fields.(Tree)
	if !ok || t.Root == nil {
		return nil, fmt.Errorf("%s has no content", o.Ref())
	}
	if v, ok := plainValue(t.Root); ok {
		if m, ok := v.(map[string]any); ok {
			return m, nil
		}
	}
	m, err := kubectlValue(t.Root)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.Ref(), err)
	}
	return m, nil
}

// kubectlValue converts a mapping node the way kubectl does: re-encoded, then read by sigs.k8s.io/yaml
// into JSON.
func kubectlValue(n *yaml.Node) (map[string]any, error) {
	text, err := yaml.Marshal(copyNode(n))
	if err != nil {
		return nil, fmt.Errorf("re-encode: %w", err)
	}
	data, err := sigsyaml.YAMLToJSON(text)
	if err != nil {
		return nil, fmt.Errorf("convert to JSON as kubectl does: %w", err)
	}
	var m map[string]any
	if err := utiljson.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	return m, nil
}

// yaml11Only matches the plain scalars that YAML 1.1 (sigs.k8s.io/yaml, which kubectl uses) reads
// differently from YAML 1.2 (yaml.v3): the 1.1 booleans, and numbers with a leading zero (octal in 1.1),
// a binary prefix or a sexagesimal colon.
var yaml11Only = regexp.MustCompile(`^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF|[-+]?0[0-9_]+|[-+]?0b[01_]+|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?)$`)

// plainValue converts a node tree to the JSON values kubectl would send, when every scalar reads the
// same in YAML 1.1 and 1.2 and maps to JSON (strings, int64, float64, bools, null; string keys, no
// merge keys). ok is false otherwise, and Content then converts the slow, exact way. It spares
// re-encoding and re-parsing every object's YAML (most of `check`'s time on large inputs,
// BENCHMARKS.md); yaml.v3 has already resolved each scalar's tag. It expands aliases: the document has
// passed yamlbudget's check, which bounds their expansion and depth and refuses cycles.
func plainValue(n *yaml.Node) (v any, ok bool) {
	switch n.Kind {
	case yaml.AliasNode:
		return plainValue(n.Alias)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" || k.Value == "<<" ||
				(k.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle) == 0 && yaml11Only.MatchString(k.Value)) {
				return nil, false
			}
			val, ok := plainValue(n.Content[i+1])
			if !ok {
				return nil, false
			}
			m[k.Value] = val
		}
		return m, true
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			val, ok := plainValue(c)
			if !ok {
				return nil, false
			}
			s = append(s, val)
		}
		return s, true
	case yaml.ScalarNode:
		if n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0 && yaml11Only.MatchString(n.Value) {
			return nil, false
		}
		switch n.ShortTag() {
		case "!!str":
			return n.Value, true
		case "!!null":
			return nil, true
		case "!!bool":
			b, err := strconv.ParseBool(n.Value)
			return b, err == nil
		case "!!int":
			i, err := strconv.ParseInt(n.Value, 0, 64)
			return i, err == nil && !strings.ContainsAny(n.Value, "_oO")
		case "!!float":
			f, err := strconv.ParseFloat(n.Value, 64)
			if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
				return nil, false
			}
			// kubectl sends the float as encoding/json writes it, and the API server reads a number
			// written without a fraction or exponent as an integer (apimachinery's JSON).
			text, err := json.Marshal(f)
			if err != nil {
				return nil, false
			}
			if i, err := strconv.ParseInt(string(text), 10, 64); err == nil {
				return i, true
			}
			return f, true
		}
	}
	return nil, false
}
