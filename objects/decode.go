package objects

import (
	"fmt"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/karpenter-guard/karpenter-guard/internal/yamlpos"
)

// DecodeError is an input error inside one document: what is wrong and where.
type DecodeError struct {
	Line    int
	Message string
}

func (e *DecodeError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Message) }

// Decoded is the outcome of decoding one document node.
type Decoded struct {
	// Object is set when the document is a kind the tool checks.
	Object *Object
	// Ignored is set, with a short description, for well-formed objects of other kinds.
	Ignored string
}

// Decode turns a parsed document (a mapping node) into an Object. Kinds the tool does not check are
// returned as Ignored; documents that cannot be Kubernetes objects, removed Karpenter kinds and wrong
// types in fields the rules read are errors with the file line (node lines plus lineOffset).
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
	var head struct {
		APIVersion any      `yaml:"apiVersion"`
		Kind       any      `yaml:"kind"`
		Metadata   Metadata `yaml:"metadata"`
	}
	headOK, bad := decodeHeadFast(root, &head.APIVersion, &head.Kind, &head.Metadata)
	if !headOK {
		head.APIVersion, head.Kind, head.Metadata = nil, nil, Metadata{}
		if err := root.Decode(&head); err != nil {
			msg := withField(shiftLines(err, lineOffset), root, bad)
			return Decoded{}, &DecodeError{Line: errorLine(msg, line(root)), Message: msg}
		}
	}
	apiVersion, okA := head.APIVersion.(string)
	kind, okK := head.Kind.(string)
	switch {
	case !okA || apiVersion == "":
		return Decoded{}, &DecodeError{Line: line(root), Message: "not a Kubernetes object: apiVersion is missing or not a string"}
	case !okK || kind == "":
		return Decoded{}, &DecodeError{Line: line(root), Message: "not a Kubernetes object: kind is missing or not a string"}
	}
	o := &Object{
		APIVersion:  apiVersion,
		Kind:        kind,
		Name:        head.Metadata.Name,
		Namespace:   head.Metadata.Namespace,
		Annotations: head.Metadata.Annotations,
		File:        file,
		LineOffset:  lineOffset,
		Root:        root,
		JSON:        root.Style&yaml.FlowStyle != 0,
	}
	group, version := o.Group(), o.Version()
	if group == "" && IsKarpenterGroup(apiVersion) {
		group = apiVersion // "karpenter.sh" without a version: an unknown Karpenter kind, not a core one
	}
	k, _ := MapEntry(root, "kind")
	if group == GroupKarpenter || group == GroupKarpenterAWS {
		if msg := unsupportedKarpenterKind(group, version, kind); msg != "" {
			return Decoded{}, &DecodeError{Line: line(k), Message: msg}
		}
	}
	if apiVersion == FactsAPIVersion && kind == KindClusterFacts {
		// A facts snapshot in the input: the caller decodes it strictly (package facts).
		return Decoded{Object: o}, nil
	}
	var view any
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
		return Decoded{Ignored: fmt.Sprintf("%s %s", apiVersion, kind)}, nil
	}
	if o.Name == "" {
		return Decoded{}, &DecodeError{Line: line(root), Message: fmt.Sprintf("%s has no metadata.name", kind)}
	}
	// A head the fast decoder declined is declined again by the view, at the same node: only an
	// exact head is worth a fast view.
	if headOK {
		var viewOK bool
		if viewOK, bad = decodeViewFast(root, view, &head.Metadata); viewOK {
			return Decoded{Object: o}, nil
		}
	}
	if err := root.Decode(view); err != nil {
		msg := withField(shiftLines(err, lineOffset), root, bad)
		return Decoded{}, &DecodeError{Line: errorLine(msg, line(root)), Message: fmt.Sprintf("%s %q: %s", kind, o.Name, msg)}
	}
	return Decoded{Object: o}, nil
}

// withField names the field of a one-error yaml.v3 message when its line cannot: in JSON, as the API
// server sends objects, every node is on line 1, and "expected a string, found a list" alone does not
// say where. bad is the node the fast decoder stopped at, which is where yaml.v3 fails on such input.
func withField(msg string, root, bad *yaml.Node) string {
	if bad == nil || bad.Line != root.Line || strings.Contains(msg, "; ") {
		return msg
	}
	path, found := pathTo(root, bad, nil)
	if !found || len(path) == 0 {
		return msg
	}
	field := Path(path...) + ": "
	if m := yamlpos.LineRE.FindStringIndex(msg); m != nil && m[0] == 0 {
		return msg[:m[1]] + " " + field + strings.TrimPrefix(msg[m[1]:], " ")
	}
	return field + msg
}

// pathTo returns the path elements (keys and indices) from n down to target.
func pathTo(n, target *yaml.Node, path []any) ([]any, bool) {
	if n == target {
		return path, true
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k == target {
				return append(path, k.Value), true
			}
			if p, ok := pathTo(v, target, append(path, k.Value)); ok {
				return p, true
			}
		}
	case yaml.SequenceNode:
		for i, e := range n.Content {
			if p, ok := pathTo(e, target, append(path, i)); ok {
				return p, true
			}
		}
	}
	return nil, false
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
