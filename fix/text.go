package fix

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"

	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

// A textEdit replaces bytes [start, end) of a file with text.
type textEdit struct {
	start, end int
	text       string
}

// file is one file's text with its line index.
type file struct {
	data  []byte
	lines []int // byte offset of the start of each line; lines[0] is line 1
}

func newFile(data []byte) *file {
	f := &file{data: data, lines: []int{0}}
	for i, b := range data {
		if b == '\n' && i+1 < len(data) {
			f.lines = append(f.lines, i+1)
		}
	}
	return f
}

// lineStart and lineEnd return the byte range of a 1-based line, lineEnd including its newline.
func (f *file) lineStart(n int) int { return f.lines[n-1] }

func (f *file) lineEnd(n int) int {
	if n < len(f.lines) {
		return f.lines[n]
	}
	return len(f.data)
}

func (f *file) lineText(n int) string {
	return strings.TrimRight(string(f.data[f.lineStart(n):f.lineEnd(n)]), "\r\n")
}

// offset returns the byte offset of a 1-based line and 1-based rune column.
func (f *file) offset(line, col int) int {
	off := f.lineStart(line)
	for i := 1; i < col && off < len(f.data); i++ {
		_, size := utf8.DecodeRune(f.data[off:])
		off += size
	}
	return off
}

var errUnsupported = errors.New("this layout cannot be edited safely")

// render turns one structural edit into text edits on the object's file, preserving every byte that
// the edit does not change. It refuses (errUnsupported) layouts it cannot edit exactly: JSON files,
// flow collections spanning lines, multi-line values.
func render(f *file, e validators.Edit) ([]textEdit, error) {
	o := e.Object
	if o.JSON {
		return nil, fmt.Errorf("%w: JSON files are not rewritten", errUnsupported)
	}
	parent := objects.Lookup(o.Root, e.Path...)
	if parent == nil || parent.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%w: %s is not a mapping", errUnsupported, objects.Path(e.Path...))
	}
	if parent.Style&yaml.FlowStyle != 0 {
		return renderFlow(f, o, parent, e)
	}
	idx := -1
	for i := 0; i+1 < len(parent.Content); i += 2 {
		if parent.Content[i].Value == e.Key {
			idx = i
		}
	}
	switch e.Op {
	case validators.EditSet:
		if idx < 0 {
			return nil, fmt.Errorf("%w: %s has no key %q", errUnsupported, objects.Path(e.Path...), e.Key)
		}
		te, err := replaceScalar(f, o, parent.Content[idx+1], e.Value)
		if err != nil {
			return nil, err
		}
		return []textEdit{te}, nil
	case validators.EditRename:
		if idx < 0 {
			return nil, fmt.Errorf("%w: %s has no key %q", errUnsupported, objects.Path(e.Path...), e.Key)
		}
		k, err := replaceScalar(f, o, parent.Content[idx], Scalar(e.NewKey))
		if err != nil {
			return nil, err
		}
		out := []textEdit{k}
		if e.Value != nil {
			v, err := replaceScalar(f, o, parent.Content[idx+1], e.Value)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case validators.EditDelete:
		if idx < 0 {
			return nil, nil
		}
		return deleteEntry(f, o, parent, idx)
	case validators.EditAdd:
		if idx >= 0 {
			return nil, fmt.Errorf("%w: %s already has %q", errUnsupported, objects.Path(e.Path...), e.Key)
		}
		return addEntry(f, o, parent, e.Key, e.Value)
	}
	return nil, fmt.Errorf("unknown edit %q", e.Op)
}

// Scalar is validators.Scalar, for brevity here.
func Scalar(v string) *yaml.Node { return validators.Scalar(v) }

// replaceScalar replaces a one-line scalar's text, keeping its quoting style unless the new value
// asks for one.
func replaceScalar(f *file, o *objects.Object, n, v *yaml.Node) (textEdit, error) {
	if n.Kind != yaml.ScalarNode || n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return textEdit{}, fmt.Errorf("%w: value at line %d is not a one-line scalar", errUnsupported, o.LineOf(n))
	}
	line := o.LineOf(n)
	start := f.offset(line, n.Column)
	end, err := scalarEnd(f.data[start:f.lineEnd(line)], n)
	if err != nil {
		return textEdit{}, fmt.Errorf("%w: value at line %d: %v", errUnsupported, line, err)
	}
	style := v.Style
	if style == 0 {
		style = n.Style &^ yaml.FlowStyle
	}
	text, err := scalarText(v.Value, style)
	if err != nil {
		return textEdit{}, err
	}
	return textEdit{start: start, end: start + end, text: text}, nil
}

// scalarEnd returns the length of the scalar token n at the start of rest (the rest of its line).
func scalarEnd(rest []byte, n *yaml.Node) (int, error) {
	s := strings.TrimRight(string(rest), "\r\n")
	switch {
	case n.Style&yaml.DoubleQuotedStyle != 0:
		for i := 1; i < len(s); i++ {
			switch s[i] {
			case '\\':
				i++
			case '"':
				return i + 1, nil
			}
		}
		return 0, errors.New("double-quoted value continues on the next line")
	case n.Style&yaml.SingleQuotedStyle != 0:
		for i := 1; i < len(s); i++ {
			if s[i] == '\'' {
				if i+1 < len(s) && s[i+1] == '\'' {
					i++
					continue
				}
				return i + 1, nil
			}
		}
		return 0, errors.New("single-quoted value continues on the next line")
	}
	// A one-line plain scalar is its value, verbatim.
	if !strings.HasPrefix(s, n.Value) {
		return 0, errors.New("plain value continues on the next line")
	}
	return len(n.Value), nil
}

// scalarText renders a scalar in a style, quoting a plain value when YAML would misread it.
func scalarText(v string, style yaml.Style) (string, error) {
	switch {
	case style&yaml.DoubleQuotedStyle != 0:
		return encodeInline(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v, Style: yaml.DoubleQuotedStyle})
	case style&yaml.SingleQuotedStyle != 0:
		return "'" + strings.ReplaceAll(v, "'", "''") + "'", nil
	}
	return encodeInline(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v})
}

func encodeInline(n *yaml.Node) (string, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		return "", err
	}
	if err := enc.Close(); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// entryRange returns the first and last file line of mapping entry idx (key index) of parent,
// excluding trailing blank lines and comments that belong to what follows.
func entryRange(f *file, o *objects.Object, parent *yaml.Node, idx int) (int, int) {
	key := parent.Content[idx]
	first := o.LineOf(key)
	var last int
	if idx+2 < len(parent.Content) {
		last = o.LineOf(parent.Content[idx+2]) - 1
	} else {
		last = boundOf(o, parent)
	}
	keyIndent := key.Column - 1
	for last > first {
		t := f.lineText(last)
		trim := strings.TrimLeft(t, " \t")
		if trim == "" || (strings.HasPrefix(trim, "#") && len(t)-len(trim) <= keyIndent) {
			last--
			continue
		}
		break
	}
	return first, last
}

// boundOf returns the last file line that may belong to node target: the line before whatever follows
// it in the document.
func boundOf(o *objects.Object, target *yaml.Node) int {
	root := o.DocRoot
	if root == nil {
		root = o.Root
	}
	end, _ := walkBound(o, root, target, o.DocEndLine)
	return end
}

func walkBound(o *objects.Object, n, target *yaml.Node, end int) (int, bool) {
	if n == target {
		return end, true
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			e := end
			if i+2 < len(n.Content) {
				e = o.LineOf(n.Content[i+2]) - 1
			}
			if b, ok := walkBound(o, n.Content[i+1], target, e); ok {
				return b, true
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			e := end
			if i+1 < len(n.Content) {
				e = o.LineOf(n.Content[i+1]) - 1
			}
			if b, ok := walkBound(o, c, target, e); ok {
				return b, true
			}
		}
	}
	return end, false
}

// deleteEntry removes a whole mapping entry's lines. When it is the mapping's only entry and the
// mapping is itself a value under a key, the parent key goes too (no "annotations:" left dangling).
func deleteEntry(f *file, o *objects.Object, parent *yaml.Node, idx int) ([]textEdit, error) {
	key := parent.Content[idx]
	if len(parent.Content) == 2 {
		if gp, gi := parentEntry(o, parent); gp != nil && gp.Style&yaml.FlowStyle == 0 {
			return deleteEntry(f, o, gp, gi)
		}
	}
	first, last := entryRange(f, o, parent, idx)
	if strings.TrimSpace(f.lineText(first)[:runeOffset(f.lineText(first), key.Column-1)]) != "" {
		return nil, fmt.Errorf("%w: key %q at line %d shares its line with a list marker", errUnsupported, key.Value, first)
	}
	return []textEdit{{start: f.lineStart(first), end: f.lineEnd(last)}}, nil
}

// parentEntry finds the mapping and key index whose value is m.
func parentEntry(o *objects.Object, m *yaml.Node) (*yaml.Node, int) {
	var found *yaml.Node
	idx := -1
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if found != nil {
			return
		}
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i+1] == m {
					found, idx = n, i
					return
				}
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(o.Root)
	return found, idx
}

func runeOffset(s string, runes int) int {
	off := 0
	for i := 0; i < runes && off < len(s); i++ {
		_, size := utf8.DecodeRuneInString(s[off:])
		off += size
	}
	return off
}

// addEntry appends key: value after the mapping's last entry, at the mapping's indentation.
func addEntry(f *file, o *objects.Object, parent *yaml.Node, key string, v *yaml.Node) ([]textEdit, error) {
	if len(parent.Content) == 0 {
		return nil, fmt.Errorf("%w: empty mapping", errUnsupported)
	}
	_, last := entryRange(f, o, parent, len(parent.Content)-2)
	indent := strings.Repeat(" ", parent.Content[0].Column-1)
	text, err := entryText(indent, key, v)
	if err != nil {
		return nil, err
	}
	at := f.lineEnd(last)
	if at > 0 && f.data[at-1] != '\n' {
		text = "\n" + strings.TrimSuffix(text, "\n")
	}
	return []textEdit{{start: at, end: at, text: text}}, nil
}

// entryText renders "key: value" lines at an indentation, ending in a newline.
func entryText(indent, key string, v *yaml.Node) (string, error) {
	k, err := scalarText(key, 0)
	if err != nil {
		return "", err
	}
	if v.Kind == yaml.ScalarNode {
		s, err := scalarText(v.Value, v.Style)
		if err != nil {
			return "", err
		}
		return indent + k + ": " + s + "\n", nil
	}
	body, err := encodeInline(v)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(indent + k + ":\n")
	for _, l := range strings.Split(body, "\n") {
		b.WriteString(indent + "  " + l + "\n")
	}
	return b.String(), nil
}

// renderFlow edits a one-line flow mapping ({a: 1, b: 2}) by re-rendering it whole.
func renderFlow(f *file, o *objects.Object, parent *yaml.Node, e validators.Edit) ([]textEdit, error) {
	line := o.LineOf(parent)
	text := f.lineText(line)
	startByte := runeOffset(text, parent.Column-1)
	end := matchingBrace(text[startByte:])
	if end < 0 {
		return nil, fmt.Errorf("%w: flow mapping at line %d spans lines", errUnsupported, line)
	}
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: yaml.FlowStyle}
	found := false
	for i := 0; i+1 < len(parent.Content); i += 2 {
		k, v := parent.Content[i], parent.Content[i+1]
		if k.Value != e.Key {
			m.Content = append(m.Content, k, v)
			continue
		}
		found = true
		switch e.Op {
		case validators.EditSet:
			m.Content = append(m.Content, k, e.Value)
		case validators.EditRename:
			if e.Value != nil {
				v = e.Value
			}
			m.Content = append(m.Content, Scalar(e.NewKey), v)
		}
	}
	if e.Op == validators.EditAdd {
		if found {
			return nil, fmt.Errorf("%w: %q already present", errUnsupported, e.Key)
		}
		m.Content = append(m.Content, Scalar(e.Key), e.Value)
	}
	if len(m.Content) == 0 {
		return nil, fmt.Errorf("%w: the edit would empty a flow mapping", errUnsupported)
	}
	s, err := encodeInline(m)
	if err != nil {
		return nil, err
	}
	if strings.Contains(s, "\n") {
		return nil, fmt.Errorf("%w: flow mapping at line %d would span lines", errUnsupported, line)
	}
	start := f.lineStart(line) + startByte
	return []textEdit{{start: start, end: start + end, text: s}}, nil
}

// matchingBrace returns the length of the flow mapping at the start of s, or -1 when it does not
// close on this line.
func matchingBrace(s string) int {
	depth := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}
