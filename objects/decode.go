package objects

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/karpenter-guard/karpenter-guard/internal/yamlpos"
)

// DecodeError is an input error inside one document: what is wrong and where.
type DecodeError struct {
	Line    int
	Message string
}

func (e *DecodeError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Message) }

// Decoded is the outcome of decoding one document.
type Decoded struct {
	// Object is set when the document is a kind the tool checks.
	Object *Object
	// Ignored is set, with a short description, for well-formed objects of other kinds.
	Ignored string
}

// head is what every Kubernetes object starts with. apiVersion and kind are read as any so that a
// wrong type is worded as "not a Kubernetes object", not as a decoding error.
type head struct {
	APIVersion any      `json:"apiVersion" yaml:"apiVersion"`
	Kind       any      `json:"kind" yaml:"kind"`
	Metadata   Metadata `json:"metadata" yaml:"metadata"`
}

// Decode turns a parsed YAML document (a mapping node, as the CLI reads manifests) into an Object.
// Kinds the tool does not check are returned as Ignored; documents that cannot be Kubernetes objects,
// removed Karpenter kinds and wrong types in fields the rules read are errors with the file line (node
// lines plus lineOffset). root's document must have passed yamlbudget's check (the manifest reader checks
// every document): the Object's conversions and copies expand aliases.
func Decode(root *yaml.Node, file string, lineOffset int) (Decoded, error) {
	root = resolve(root)
	line := func(n *yaml.Node) int {
		if n == nil {
			return lineOffset + 1
		}
		return lineOffset + n.Line
	}
	if root == nil || root.Kind != yaml.MappingNode {
		return Decoded{}, &DecodeError{Line: line(root), Message: "not a Kubernetes object: expected a mapping with apiVersion and kind"}
	}
	tree := Tree{Root: root, LineOffset: lineOffset}
	var h head
	if err := root.Decode(&h); err != nil {
		msg := treeError(tree, err, &head{})
		return Decoded{}, &DecodeError{Line: errorLine(msg, line(root)), Message: msg}
	}
	k, _ := MapEntry(root, "kind")
	o, view, d, err := classify(h, file, line(root), line(k))
	if o == nil {
		return d, err
	}
	o.Fields = tree
	o.Root, o.LineOffset, o.JSON = root, lineOffset, root.Style&yaml.FlowStyle != 0
	if view == nil {
		return Decoded{Object: o}, nil
	}
	if err := root.Decode(view); err != nil {
		msg := treeError(tree, err, freshView(o))
		return Decoded{}, &DecodeError{Line: errorLine(msg, line(root)), Message: fmt.Sprintf("%s %q: %s", o.Kind, o.Name, msg)}
	}
	return Decoded{Object: o}, nil
}

// FromJSON decodes one object sent as JSON, as the API server sends objects for admission review.
// file names its source in references ("" for an admission request).
func FromJSON(data []byte, file string) (Decoded, error) {
	var m map[string]any
	if err := utiljson.Unmarshal(data, &m); err != nil {
		return Decoded{}, &DecodeError{Line: 1, Message: "not valid JSON: " + strings.TrimPrefix(err.Error(), "json: ")}
	}
	if m == nil {
		return Decoded{}, &DecodeError{Line: 1, Message: "not a Kubernetes object: expected a mapping with apiVersion and kind"}
	}
	return decodeMap(m, data, file)
}

// FromUnstructured decodes an object of the cluster's cache (an unstructured object's content). The
// Object reads its fields from content, which is shared, not copied: neither may be modified after.
func FromUnstructured(content map[string]any, file string) (Decoded, error) {
	if content == nil {
		return Decoded{}, &DecodeError{Line: 1, Message: "not a Kubernetes object: expected a mapping with apiVersion and kind"}
	}
	return decodeMap(content, nil, file)
}

// decodeMap decodes plain values with apimachinery's converter, the one the cluster's cache feeds.
// raw, when the caller has it, is the JSON the values came from, used only to word an error.
func decodeMap(m map[string]any, raw []byte, file string) (Decoded, error) {
	var h head
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &h); err != nil {
		return Decoded{}, &DecodeError{Line: 1, Message: mapError(m, raw, err, &head{})}
	}
	o, view, d, err := classify(h, file, 1, 1)
	if o == nil {
		return d, err
	}
	o.Fields = Map(m)
	if view == nil {
		return Decoded{Object: o}, nil
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, view); err != nil {
		return Decoded{}, &DecodeError{Line: 1, Message: fmt.Sprintf("%s %q: %s", o.Kind, o.Name, mapError(m, raw, err, freshView(o)))}
	}
	return Decoded{Object: o}, nil
}

// classify reads an object's head: the Object with its empty view to decode into (nil for a facts
// snapshot, which package facts decodes), or, when o is nil, the Decoded result or error to return.
// line and kindLine are where errors about the object and about its kind point.
func classify(h head, file string, line, kindLine int) (o *Object, view any, d Decoded, err error) {
	apiVersion, okA := h.APIVersion.(string)
	kind, okK := h.Kind.(string)
	switch {
	case !okA || apiVersion == "":
		return nil, nil, Decoded{}, &DecodeError{Line: line, Message: "not a Kubernetes object: apiVersion is missing or not a string"}
	case !okK || kind == "":
		return nil, nil, Decoded{}, &DecodeError{Line: line, Message: "not a Kubernetes object: kind is missing or not a string"}
	}
	o = &Object{APIVersion: apiVersion, Kind: kind, Name: h.Metadata.Name, Namespace: h.Metadata.Namespace,
		Annotations: h.Metadata.Annotations, File: file}
	group, version := o.Group(), o.Version()
	if group == "" && IsKarpenterGroup(apiVersion) {
		group = apiVersion // "karpenter.sh" without a version: an unknown Karpenter kind, not a core one
	}
	if group == GroupKarpenter || group == GroupKarpenterAWS {
		if msg := unsupportedKarpenterKind(group, version, kind); msg != "" {
			return nil, nil, Decoded{}, &DecodeError{Line: kindLine, Message: msg}
		}
	}
	if apiVersion == FactsAPIVersion && kind == KindClusterFacts {
		return o, nil, Decoded{}, nil
	}
	switch {
	case group == GroupKarpenterAWS && kind == KindEC2NodeClass:
		o.NodeClass = &EC2NodeClass{}
		view = o.NodeClass
	case group == GroupKarpenter && kind == KindNodePool:
		o.NodePool = &NodePool{}
		view = o.NodePool
	case apiVersion == "v1" && kind == KindConfigMap && o.Name == AWSAuthName &&
		(o.Namespace == AWSAuthNamespace || o.Namespace == ""):
		o.AWSAuth = &ConfigMap{}
		view = o.AWSAuth
	default:
		return nil, nil, Decoded{Ignored: fmt.Sprintf("%s %s", apiVersion, kind)}, nil
	}
	if o.Name == "" {
		return nil, nil, Decoded{}, &DecodeError{Line: line, Message: fmt.Sprintf("%s has no metadata.name", kind)}
	}
	return o, view, Decoded{}, nil
}

// freshView returns a new, empty view of o's kind, to decode again when wording an error.
func freshView(o *Object) any {
	switch {
	case o.NodeClass != nil:
		return &EC2NodeClass{}
	case o.NodePool != nil:
		return &NodePool{}
	default:
		return &ConfigMap{}
	}
}

// treeError words a yaml.v3 decoding error with file lines. In a JSON document every node is on line
// 1, and "line 1: expected a string, found a list" alone does not say where: the field's path is
// added, found by decoding the same values as JSON into a fresh view.
func treeError(t Tree, err error, fresh any) string {
	msg := shiftLines(err, t.LineOffset)
	if t.Root.Style&yaml.FlowStyle == 0 || strings.Contains(msg, "; ") {
		return msg
	}
	var v any
	if t.Root.Decode(&v) != nil {
		return msg
	}
	raw, jerr := json.Marshal(v)
	var te *json.UnmarshalTypeError
	if jerr != nil || !errors.As(json.Unmarshal(raw, fresh), &te) {
		return msg
	}
	path := pathAt(raw, te.Field, te.Offset)
	if len(path) == 0 {
		return msg
	}
	field := Path(path...) + ": "
	if m := yamlpos.LineRE.FindStringIndex(msg); m != nil && m[0] == 0 {
		return msg[:m[1]] + " " + field + strings.TrimPrefix(msg[m[1]:], " ")
	}
	return field + msg
}

// mapError words an error of the unstructured converter, whose messages name neither the field nor
// the value ("unrecognized type: string"): the same values are decoded as JSON into a fresh view, and
// encoding/json's type error gives the field; the value is read back from m.
func mapError(m map[string]any, raw []byte, convErr error, fresh any) string {
	if raw == nil {
		var err error
		if raw, err = json.Marshal(m); err != nil {
			return convErr.Error()
		}
	}
	var te *json.UnmarshalTypeError
	if err := json.Unmarshal(raw, fresh); !errors.As(err, &te) {
		return convErr.Error()
	}
	path := pathAt(raw, te.Field, te.Offset)
	found := "a " + te.Value
	v, _ := Map(m).lookup(path...)
	switch v.(type) {
	case map[string]any:
		found = "a mapping"
	case []any:
		found = "a list"
	case string:
		found = fmt.Sprintf("the string `%s`", v)
	case bool:
		found = fmt.Sprintf("the boolean `%v`", v)
	case nil:
		found = "null"
	default:
		found = fmt.Sprintf("the number `%v`", v)
	}
	msg := fmt.Sprintf("expected %s, found %s", expectation(te.Type.String()), found)
	if len(path) == 0 {
		return msg
	}
	return Path(path...) + ": " + msg
}

// pathAt returns the path, with list indexes, of the value encoding/json reported a type error for:
// field is the error's dotted path without indexes or map keys, offset where in raw it stopped. The
// JSON is walked token by token with encoding/json's own tokenizer.
func pathAt(raw []byte, field string, offset int64) []any {
	type frame struct {
		object    bool
		key       string
		index     int
		expectKey bool
	}
	var stack []frame
	var best []any
	current := func() ([]any, string) {
		p := make([]any, 0, len(stack))
		var names []string
		for _, f := range stack {
			if f.object {
				p = append(p, f.key)
				names = append(names, f.key)
			} else {
				p = append(p, f.index)
			}
		}
		return p, strings.Join(names, ".")
	}
	valueDone := func() {
		if n := len(stack); n > 0 {
			if stack[n-1].object {
				stack[n-1].expectKey = true
			} else {
				stack[n-1].index++
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	for {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil || start >= offset {
			return best
		}
		d, isDelim := tok.(json.Delim)
		if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].expectKey {
			if isDelim { // '}'
				stack = stack[:n-1]
				valueDone()
				continue
			}
			stack[n-1].key, _ = tok.(string)
			stack[n-1].expectKey = false
			continue
		}
		if isDelim && d == ']' {
			stack = stack[:len(stack)-1]
			valueDone()
			continue
		}
		// A map's keys are not in the error's field ("metadata.labels" for labels.a): the deepest
		// value under field that starts before offset is the one.
		if p, names := current(); len(stack) > 0 && (names == field || strings.HasPrefix(names, field+".")) {
			best = p
		}
		if isDelim {
			stack = append(stack, frame{object: d == '{', expectKey: d == '{'})
			continue
		}
		valueDone()
	}
}

// errorLine returns the file line of the first "line N:" of a shifted yaml.v3 error, else fallback.
func errorLine(msg string, fallback int) int {
	if m := yamlpos.LineRE.FindStringSubmatch(msg); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil {
			return n
		}
	}
	return fallback
}

// unsupportedKarpenterKind explains Karpenter kinds and versions that no longer exist; "" when the kind is
// one Karpenter serves (checked or not).
func unsupportedKarpenterKind(group, version, kind string) string {
	switch {
	case group == GroupKarpenter && kind == "Provisioner":
		return "karpenter.sh Provisioner was removed in Karpenter v0.32: rewrite it as a karpenter.sh/v1 NodePool"
	case group == GroupKarpenterAWS && kind == "AWSNodeTemplate":
		return "karpenter.k8s.aws AWSNodeTemplate was removed in Karpenter v0.32: rewrite it as a karpenter.k8s.aws/v1 EC2NodeClass"
	case group == GroupKarpenter && (kind == KindNodePool || kind == "NodeClaim"):
		if version == "v1" || version == "v1beta1" {
			return ""
		}
	case group == GroupKarpenter && kind == "NodeOverlay":
		return ""
	case group == GroupKarpenterAWS && kind == KindEC2NodeClass:
		if version == "v1" || version == "v1beta1" {
			return ""
		}
	}
	known := "karpenter.sh/v1 NodePool or NodeClaim, karpenter.k8s.aws/v1 EC2NodeClass"
	return fmt.Sprintf("unknown Karpenter kind %s %s: expected %s (check the spelling of apiVersion and kind)",
		strings.TrimSuffix(group+"/"+version, "/"), kind, known)
}

// IsKarpenterGroup reports whether an apiVersion belongs to one of Karpenter's API groups.
func IsKarpenterGroup(apiVersion string) bool {
	g, _, _ := strings.Cut(apiVersion, "/")
	return g == GroupKarpenter || g == GroupKarpenterAWS
}
