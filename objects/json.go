package objects

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
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
	// Every node is a key (before a ':') or a value (the root, a key's value or an array element):
	// counting ':' and '[' (fast, though it counts those inside strings too) sizes a first chunk that
	// holds most objects, and as many child pointers. The count is capped, since a string of colons would otherwise reserve
	// memory for nodes that do not exist; larger trees take further chunks.
	n := min(1+2*bytes.Count(data, []byte(":"))+2*bytes.Count(data, []byte("[")), maxFirstSlab)
	a := &Arena{nodes: [][]yaml.Node{make([]yaml.Node, 0, n)}, ptrs: [][]*yaml.Node{make([]*yaml.Node, 0, n)}}
	return FromJSONIn(a, data, file)
}

// FromJSONIn is FromJSON with the object's nodes taken from a, which the caller resets once it no
// longer needs the object: the webhook reads an object per review, and fresh nodes were about half
// the bytes a review allocated.
func FromJSONIn(a *Arena, data []byte, file string) (Decoded, error) {
	s := &jsonScanner{data: data, text: string(data), arena: a, stack: a.stack[:0]}
	defer func() { a.stack = s.stack[:0] }() // grown once, kept for the next object
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

// maxFirstSlab bounds the first chunk of nodes FromJSON sizes: EC2NodeClasses and NodePools have
// well under 256.
const maxFirstSlab = 256

// Arena is memory for the nodes of objects read from JSON, kept for reuse. Its zero value is ready;
// Reset makes its memory free for the next objects, so every node of the objects read into it, and
// every node slice, must be out of use by then (a value kept longer, such as a patch, is copied out
// of the tree). An Arena is for one goroutine at a time: the webhook keeps them in a sync.Pool.
//
// Written here because no library builds yaml.v3 trees in reusable memory.
type Arena struct {
	// nodes are chunks of nodes and ptrs chunks of child slices; the last chunk of each that has
	// been started is nodes[nodeChunk] and ptrs[ptrChunk]. Chunks are never grown in place, which
	// would move nodes already handed out.
	nodes               [][]yaml.Node
	ptrs                [][]*yaml.Node
	nodeChunk, ptrChunk int
	// stack is the scanner's stack of children, kept empty between objects.
	stack []*yaml.Node
}

// Chunk sizes: an EC2NodeClass has about 70 nodes, so one chunk of each holds the object and the
// old object of an UPDATE.
const (
	arenaNodeChunk = 128
	arenaPtrChunk  = 256
)

// node returns a new node.
func (a *Arena) node(kind yaml.Kind, tag, value string) *yaml.Node {
	if a.nodeChunk < len(a.nodes) && len(a.nodes[a.nodeChunk]) == cap(a.nodes[a.nodeChunk]) {
		a.nodeChunk++
	}
	if a.nodeChunk == len(a.nodes) {
		a.nodes = append(a.nodes, make([]yaml.Node, 0, arenaNodeChunk))
	}
	c := &a.nodes[a.nodeChunk]
	*c = append(*c, yaml.Node{Kind: kind, Tag: tag, Value: value, Line: 1, Column: 1})
	return &(*c)[len(*c)-1]
}

// children returns a copy of c, of its exact length and capacity (an append to it cannot reach
// the next slice).
func (a *Arena) children(c []*yaml.Node) []*yaml.Node {
	if len(c) > arenaPtrChunk {
		return slices.Clone(c)
	}
	if a.ptrChunk < len(a.ptrs) && cap(a.ptrs[a.ptrChunk])-len(a.ptrs[a.ptrChunk]) < len(c) {
		a.ptrChunk++
	}
	if a.ptrChunk == len(a.ptrs) {
		a.ptrs = append(a.ptrs, make([]*yaml.Node, 0, arenaPtrChunk))
	}
	p := &a.ptrs[a.ptrChunk]
	start := len(*p)
	*p = append(*p, c...)
	return (*p)[start:len(*p):len(*p)]
}

// Nodes returns how many nodes the arena's memory holds: an arena grown for an unusually large object
// is better left to the collector than kept for every later one.
func (a *Arena) Nodes() int {
	n := 0
	for _, c := range a.nodes {
		n += cap(c)
	}
	return n
}

// Reset frees the arena's memory for new objects. The nodes handed out are zeroed, so that a use
// after Reset finds empty nodes rather than another object's, and the strings they held can be
// collected.
func (a *Arena) Reset() {
	for i := range a.nodes[:min(a.nodeChunk+1, len(a.nodes))] {
		clear(a.nodes[i])
		a.nodes[i] = a.nodes[i][:0]
	}
	for i := range a.ptrs[:min(a.ptrChunk+1, len(a.ptrs))] {
		clear(a.ptrs[i])
		a.ptrs[i] = a.ptrs[i][:0]
	}
	a.nodeChunk, a.ptrChunk = 0, 0
}

// maxJSONDepth bounds nesting, as encoding/json does, so hostile input cannot exhaust the stack.
const maxJSONDepth = 10000

// jsonScanner reads JSON into yaml.v3 nodes. It allocates little, since it runs on every review:
// strings are slices of one copy of the input, nodes come from an arena, and each container's children
// are gathered on a shared stack and copied once, at their final size.
type jsonScanner struct {
	data []byte
	// text is data as a string; plain strings are slices of it.
	text string
	pos  int
	// arena is where nodes and child slices are taken from.
	arena *Arena
	// stack holds the children of the containers being read.
	stack []*yaml.Node
}

// node returns a new node from the arena.
func (s *jsonScanner) node(kind yaml.Kind, tag, value string) *yaml.Node {
	return s.arena.node(kind, tag, value)
}

// children moves the nodes pushed on the stack since mark into an exactly sized slice.
func (s *jsonScanner) children(mark int) []*yaml.Node {
	if len(s.stack) == mark {
		return nil
	}
	c := s.arena.children(s.stack[mark:])
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
	plain, ascii := true, true
	for s.pos < len(s.data) {
		switch c := s.data[s.pos]; {
		case c == '"':
			s.pos++
			raw := s.data[start:s.pos]
			if ascii || utf8.Valid(raw) {
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
			ascii = ascii && c < utf8.RuneSelf
			s.pos++
		}
	}
	return "", s.errorf("unterminated string")
}

// unescape decodes the one-character escapes of a JSON string (\n in userData, \" in annotations).
// ok is false for surrogate \u escapes and malformed ones, which encoding/json decodes.
func unescape(raw []byte) (string, bool) {
	var b strings.Builder
	b.Grow(len(raw))
	for len(raw) > 0 {
		// Copy up to the next escape in one piece: userData is mostly text between \n escapes.
		i := bytes.IndexByte(raw, '\\')
		if i < 0 {
			b.Write(raw)
			break
		}
		b.Write(raw[:i])
		raw = raw[i+1:]
		if len(raw) == 0 {
			return "", false
		}
		n := 1 // bytes of the escape after the backslash
		switch raw[0] {
		case '"', '\\', '/':
			b.WriteByte(raw[0])
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			// \u003c, \u003e and \u0026 are how Kubernetes writes <, > and &.
			r, ok := hex4(raw[1:])
			if !ok || utf16.IsSurrogate(r) {
				return "", false // surrogate pairs and bad escapes: encoding/json decides
			}
			b.WriteRune(r)
			n = 5
		default:
			return "", false
		}
		raw = raw[n:]
	}
	return b.String(), true
}

// hex4 reads the four hex digits of a \u escape.
func hex4(p []byte) (rune, bool) {
	if len(p) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range p[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
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
