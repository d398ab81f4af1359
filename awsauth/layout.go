package awsauth

import (
	"regexp"
	"strconv"
	"strings"

	yaml2 "go.yaml.in/yaml/v2"
	yaml "go.yaml.in/yaml/v3"

	"github.com/karpenter-guard/karpenter-guard/internal/yamlbudget"
)

// This file finds lines inside a data value. The values are read with the YAML library EKS uses
// (yaml.v2, which gives no positions); the positions come from a second parse into yaml.v3 nodes,
// trusted only where its shape agrees with what EKS read.

// layout is the node tree of one data value, for lines.
type layout struct {
	// root is the value's top node; nil when yaml.v3 cannot parse the value or it is over the YAML
	// budget.
	root *yaml.Node
	// items are root's items when it is a list.
	items []*yaml.Node
}

// newLayout parses value for its lines. A value whose aliases expand past the YAML budget (package
// yamlbudget) has no layout, so that nothing walks it: yaml.v2 refuses it too, and that refusal, with
// its line, is what EKS does and what is reported.
func newLayout(value string) layout {
	var doc yaml.Node
	if yaml.Unmarshal([]byte(value), &doc) != nil || len(doc.Content) == 0 || yamlbudget.Check(&doc) != nil {
		return layout{}
	}
	root := doc.Content[0]
	l := layout{root: root}
	if resolve(root).Kind == yaml.SequenceNode {
		l.items = resolve(root).Content
	}
	return l
}

// resolve follows an alias to the node it names.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// item returns the i-th list item when the list has n items as EKS read it, else nil.
func (l layout) item(i, n int) *yaml.Node {
	if len(l.items) != n || i < 0 || i >= n {
		return nil
	}
	return l.items[i]
}

// line is n's line, 0 for nil.
func line(n *yaml.Node) int {
	if n == nil {
		return 0
	}
	return n.Line
}

// field returns the key and value nodes of key in an entry (the last of them, as yaml.v2 keeps the last
// of duplicate keys), or nils when the entry does not write it directly (a merge key, an alias).
func field(entry *yaml.Node, key string) (k, v *yaml.Node) {
	entry = resolve(entry)
	if entry == nil || entry.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(entry.Content); i += 2 {
		if entry.Content[i].Kind == yaml.ScalarNode && entry.Content[i].Value == key {
			k, v = entry.Content[i], entry.Content[i+1]
		}
	}
	return k, v
}

// duplicateKeys returns, for each key an entry writes more than once, the lines of all its writings.
func duplicateKeys(entry *yaml.Node) map[string][]int {
	entry = resolve(entry)
	if entry == nil || entry.Kind != yaml.MappingNode {
		return nil
	}
	lines := map[string][]int{}
	for i := 0; i+1 < len(entry.Content); i += 2 {
		if k := entry.Content[i]; k.Kind == yaml.ScalarNode && k.Value != "<<" {
			lines[k.Value] = append(lines[k.Value], k.Line)
		}
	}
	for k, ls := range lines {
		if len(ls) < 2 {
			delete(lines, k)
		}
	}
	return lines
}

// unconvertibleLine returns the line of the first node sigs.k8s.io/yaml cannot turn into JSON: a
// mapping key that is null or a collection, or an infinite or NaN number. 0 when none is found. It does
// not follow aliases: what an alias names was already walked where its anchor is.
func unconvertibleLine(n *yaml.Node) int {
	if n == nil {
		return 0
	}
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for _, c := range n.Content {
			if l := unconvertibleLine(c); l > 0 {
				return l
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := resolve(n.Content[i])
			if k != nil && (k.Kind != yaml.ScalarNode || k.Tag == "!!null") {
				return n.Content[i].Line
			}
			if l := unconvertibleLine(n.Content[i+1]); l > 0 {
				return l
			}
		}
	case yaml.ScalarNode:
		if v := strings.TrimLeft(strings.ToLower(n.Value), "+-"); n.Tag == "!!float" && (v == ".inf" || v == ".nan") {
			return n.Line
		}
	}
	return 0
}

var syntaxLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntaxError splits a yaml.v2 syntax error into its line inside value and its message.
func syntaxError(value string, err error) (int, string) {
	line, msg := 0, err.Error()
	if m := syntaxLineRE.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	return syntaxErrorLine(value, line), msg
}

// prefixBudget is how many bytes syntaxErrorLine re-parses beyond twice the value: re-parsing every
// prefix grows with the square of the value, so the budget keeps the work linear.
const prefixBudget = 1 << 20

// syntaxErrorLine returns the 1-based line of an invalid value where YAML stops making sense: the line
// after the longest run of leading lines that still parses. The "line N" of yaml's error names the start
// of the enclosing construct, is often a line early (more after a leading ---) and is missing for errors
// on the first line, so it is only the fallback when the value is too large to re-parse.
func syntaxErrorLine(value string, fallback int) int {
	lines := strings.SplitAfter(value, "\n")
	size, budget := len(value), prefixBudget+2*len(value)
	for k := len(lines) - 1; k >= 1; k-- {
		size -= len(lines[k])
		if budget -= size; budget < 0 {
			return fallback
		}
		var v any
		if yaml2.Unmarshal([]byte(value[:size]), &v) == nil {
			return k + 1
		}
	}
	return 1
}
