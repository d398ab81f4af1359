package objects

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
)

// FromJSON decodes one object given as JSON, as the API server sends it in an AdmissionReview, into an
// Object. Objects of kinds the tool does not check are returned as Ignored.
//
// The node tree is built by a small JSON scanner written here rather than by the YAML parser or
// encoding/json's Decoder.Token, which cost about five and three times as much: this runs for every
// admission review, and no library builds yaml.v3 nodes from JSON. JSON carries no comments, anchors
// or lines to keep (every node is on line 1). FuzzFromJSON holds it to encoding/json's verdicts and
// values.
func FromJSON(data []byte, file string) (Decoded, error) {
	s := &jsonScanner{data: data, text: string(data)}
	// Every node is a key (before a ':') or a value (the root, a key's value or an array element):
	// counting ':' and '[' (fast, though it counts those inside strings too) sizes a first slab that
	// holds most objects. The count is capped, since a string of colons would otherwise reserve
	// memory for nodes that do not exist; larger trees take further slabs.
	s.slab = make([]yaml.Node, 0, min(1+2*bytes.Count(data, []byte(":"))+2*bytes.Count(data, []byte("[")), maxFirstSlab))
	root, err := s.value(0)
	if err == nil {
		s.space()
		if s.pos < len(s.data) {
			err = s.errorf("data after the object")
		}
	}
	if err != nil {
		return Decoded{}, &DecodeError{Line: 1, Message: "invalid JSON: " + err.Error()}
	}
	d, err := Decode(root, file, 0)
	var de *DecodeError
	if errors.As(err, &de) {
		// Every JSON node is on line 1: "line 1:" in the message points nowhere.
		de.Message = strings.ReplaceAll(de.Message, "line 1: ", "")
	}
	return d, err
}

// maxFirstSlab bounds the first slab of nodes: EC2NodeClasses and NodePools have well under 256.
const maxFirstSlab = 256

// maxJSONDepth bounds nesting, as encoding/json does, so hostile input cannot exhaust the stack.
const maxJSONDepth = 10000

// jsonScanner reads JSON into yaml.v3 nodes. It allocates little, since it runs on every review:
// strings are slices of one copy of the input, nodes come from slabs, and each container's children
// are gathered on a shared stack and copied once, at their final size.
type jsonScanner struct {
	data []byte
	// text is data as a string; plain strings are slices of it.
	text string
	pos  int
	// slab is where the next nodes are taken from.
	slab []yaml.Node
	// stack holds the children of the containers being read.
	stack []*yaml.Node
}

// node returns a new node from the slab.
func (s *jsonScanner) node(kind yaml.Kind, tag, value string) *yaml.Node {
	if len(s.slab) == cap(s.slab) {
		s.slab = make([]yaml.Node, 0, 64)
	}
	s.slab = append(s.slab, yaml.Node{Kind: kind, Tag: tag, Value: value, Line: 1, Column: 1})
	return &s.slab[len(s.slab)-1]
}

// children moves the nodes pushed on the stack since mark into an exactly sized slice.
func (s *jsonScanner) children(mark int) []*yaml.Node {
	if len(s.stack) == mark {
		return nil
	}
	c := make([]*yaml.Node, len(s.stack)-mark)
	copy(c, s.stack[mark:])
	clear(s.stack[mark:])
	s.stack = s.stack[:mark]
	return c
}

func (s *jsonScanner) errorf(format string, args ...any) error {
	return fmt.Errorf("offset %d: %s", s.pos, fmt.Sprintf(format, args...))
}

func (s *jsonScanner) space() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// value reads one JSON value into a node.
func (s *jsonScanner) value(depth int) (*yaml.Node, error) {
	if depth > maxJSONDepth {
		return nil, s.errorf("nested too deeply")
	}
	s.space()
	if s.pos >= len(s.data) {
		return nil, s.errorf("unexpected end of input")
	}
	switch c := s.data[s.pos]; {
	case c == '{':
		return s.object(depth)
	case c == '[':
		return s.array(depth)
	case c == '"':
		str, err := s.str()
		if err != nil {
			return nil, err
		}
		n := s.node(yaml.ScalarNode, "!!str", str)
		n.Style = yaml.DoubleQuotedStyle
		return n, nil
	case c == 't':
		return s.literal("true", "!!bool")
	case c == 'f':
		return s.literal("false", "!!bool")
	case c == 'n':
		return s.literal("null", "!!null")
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number()
	}
	return nil, s.errorf("unexpected character %q", s.data[s.pos])
}

func (s *jsonScanner) object(depth int) (*yaml.Node, error) {
	n := s.node(yaml.MappingNode, "!!map", "")
	n.Style = yaml.FlowStyle
	s.pos++ // {
	s.space()
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
		return n, nil
	}
	mark := len(s.stack)
	var seen map[string]bool // past a few keys; fewer are compared in place
	for {
		s.space()
		if s.pos >= len(s.data) || s.data[s.pos] != '"' {
			return nil, s.errorf("expected an object key")
		}
		key, err := s.str()
		if err != nil {
			return nil, err
		}
		if duplicate(s.stack[mark:], key, &seen) {
			return nil, s.errorf("duplicate key %q", key)
		}
		s.space()
		if s.pos >= len(s.data) || s.data[s.pos] != ':' {
			return nil, s.errorf("expected ':' after an object key")
		}
		s.pos++
		v, err := s.value(depth + 1)
		if err != nil {
			return nil, err
		}
		s.stack = append(s.stack, s.node(yaml.ScalarNode, "!!str", key), v)
		s.space()
		if s.pos >= len(s.data) {
			return nil, s.errorf("unexpected end of input in an object")
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
		case '}':
			s.pos++
			n.Content = s.children(mark)
			return n, nil
		default:
			return nil, s.errorf("expected ',' or '}' in an object")
		}
	}
}

// duplicate reports whether the keys and values read so far of a mapping hold key. encoding/json would keep the last value; the
// YAML decoding the rules rely on refuses both, so a duplicate is refused here with its name.
func duplicate(content []*yaml.Node, key string, seen *map[string]bool) bool {
	const few = 16
	if len(content) < 2*few {
		for i := 0; i < len(content); i += 2 {
			if content[i].Value == key {
				return true
			}
		}
		return false
	}
	if *seen == nil {
		*seen = make(map[string]bool, len(content))
		for i := 0; i < len(content); i += 2 {
			(*seen)[content[i].Value] = true
		}
	}
	if (*seen)[key] {
		return true
	}
	(*seen)[key] = true
	return false
}

func (s *jsonScanner) array(depth int) (*yaml.Node, error) {
	n := s.node(yaml.SequenceNode, "!!seq", "")
	n.Style = yaml.FlowStyle
	s.pos++ // [
	s.space()
	if s.pos < len(s.data) && s.data[s.pos] == ']' {
		s.pos++
		return n, nil
	}
	mark := len(s.stack)
	for {
		v, err := s.value(depth + 1)
		if err != nil {
			return nil, err
		}
		s.stack = append(s.stack, v)
		s.space()
		if s.pos >= len(s.data) {
			return nil, s.errorf("unexpected end of input in an array")
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
		case ']':
			s.pos++
			n.Content = s.children(mark)
			return n, nil
		default:
			return nil, s.errorf("expected ',' or ']' in an array")
		}
	}
}

// str reads a string. Plain strings are sliced; strings with escapes or invalid UTF-8 go through
// encoding/json, so that they decode exactly as it decodes them.
func (s *jsonScanner) str() (string, error) {
	start := s.pos
	s.pos++ // "
	// Most strings are printable ASCII without escapes: find the closing quote, check the bytes
	// before it, and slice.
	if i := bytes.IndexByte(s.data[s.pos:], '"'); i >= 0 {
		clean := true
		for _, c := range s.data[s.pos : s.pos+i] {
			if c == '\\' || c < 0x20 || c >= 0x80 {
				clean = false
				break
			}
		}
		if clean {
			s.pos += i + 1
			return s.text[start+1 : s.pos-1], nil
		}
	}
	plain := true
	for s.pos < len(s.data) {
		switch c := s.data[s.pos]; {
		case c == '"':
			s.pos++
			raw := s.data[start:s.pos]
			if utf8.Valid(raw) {
				if plain {
					return s.text[start+1 : s.pos-1], nil
				}
				if out, ok := unescape(raw[1 : len(raw)-1]); ok {
					return out, nil
				}
			}
			var out string
			if err := json.Unmarshal(raw, &out); err != nil {
				return "", s.errorf("bad string: %v", err)
			}
			return out, nil
		case c == '\\':
			plain = false
			s.pos += 2
		case c < 0x20:
			return "", s.errorf("control character in a string")
		default:
			s.pos++
		}
	}
	return "", s.errorf("unterminated string")
}

// unescape decodes the one-character escapes of a JSON string (\n in userData, \" in annotations).
// ok is false for surrogate \u escapes and malformed ones, which encoding/json decodes.
func unescape(raw []byte) (string, bool) {
	b := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' {
			b = append(b, c)
			continue
		}
		i++
		if i == len(raw) {
			return "", false
		}
		switch raw[i] {
		case '"', '\\', '/':
			b = append(b, raw[i])
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			// \u003c, \u003e and \u0026 are how Kubernetes writes <, > and &.
			if i+4 >= len(raw) {
				return "", false
			}
			r, err := strconv.ParseUint(string(raw[i+1:i+5]), 16, 32)
			if err != nil || utf16.IsSurrogate(rune(r)) {
				return "", false // surrogate pairs and bad escapes: encoding/json decides
			}
			b = utf8.AppendRune(b, rune(r))
			i += 4
		default:
			return "", false
		}
	}
	return string(b), true
}

func (s *jsonScanner) literal(word, tag string) (*yaml.Node, error) {
	if len(s.data)-s.pos < len(word) || string(s.data[s.pos:s.pos+len(word)]) != word {
		return nil, s.errorf("invalid literal")
	}
	s.pos += len(word)
	return s.node(yaml.ScalarNode, tag, word), nil
}

// number reads a number with JSON's grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *jsonScanner) number() (*yaml.Node, error) {
	start := s.pos
	digits := func() int {
		n := 0
		for s.pos < len(s.data) && s.data[s.pos] >= '0' && s.data[s.pos] <= '9' {
			s.pos++
			n++
		}
		return n
	}
	if s.data[s.pos] == '-' {
		s.pos++
	}
	switch {
	case s.pos < len(s.data) && s.data[s.pos] == '0':
		s.pos++
	case digits() == 0:
		return nil, s.errorf("invalid number")
	}
	integer := true
	if s.pos < len(s.data) && s.data[s.pos] == '.' {
		s.pos++
		integer = false
		if digits() == 0 {
			return nil, s.errorf("invalid number")
		}
	}
	if s.pos < len(s.data) && (s.data[s.pos] == 'e' || s.data[s.pos] == 'E') {
		s.pos++
		integer = false
		if s.pos < len(s.data) && (s.data[s.pos] == '+' || s.data[s.pos] == '-') {
			s.pos++
		}
		if digits() == 0 {
			return nil, s.errorf("invalid number")
		}
	}
	text := s.text[start:s.pos]
	if integer {
		if _, err := strconv.ParseInt(text, 10, 64); err == nil {
			return s.node(yaml.ScalarNode, "!!int", text), nil
		}
	}
	return s.node(yaml.ScalarNode, "!!float", text), nil
}
