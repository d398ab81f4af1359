// Package yamlbudget refuses YAML whose aliases expand past what Kubernetes' own YAML readers accept,
// before anything walks its nodes.
//
// go.yaml.in/yaml/v3 expands aliases only when it decodes into Go values, and bounds that expansion
// there. Parsed into a yaml.Node tree, an alias is a pointer to its anchored node, and every walker that
// follows it (converting an object to JSON, copying a field for a fix, decoding a view) expands it
// again, unbounded: nine levels of nine aliases in 700 bytes expand to 9^9 nodes. yaml.v3 also registers
// an anchor before it parses the anchored node's children, so an alias inside its own anchor
// (&b [*b], &b {<<: *b}) makes the tree a cycle, and a walker that follows it never ends.
//
// Budget.Check measures a parsed document as it would be expanded, without expanding it: it walks the
// nodes as written once, and an alias adds the size and height of its anchored node, measured once and
// remembered. Its limits are those of the YAML readers kubectl, the API server and nodeadm use, so that
// a document is refused where they would refuse it, but here with the line of the alias at fault:
//
//   - copies made through aliases may be at most 99% of a document's nodes up to 400,000 nodes,
//     falling to 10% at 4,000,000: the "excessive aliasing" rule of yaml.v2 (sigs.k8s.io/yaml, which
//     kubectl and apimachinery read YAML with) and yaml.v3, checked at every alias as they check it at
//     every node. A document within it copies at most about 400,000 nodes (plus a tenth of a larger
//     document), and a Budget applies the same rule to all the documents it checks together, so that
//     many documents each just under the limit do not add up to billions of nodes;
//   - collections may nest at most MaxDepth levels once expanded: the limit of yaml.v3's parser and of
//     the JSON decoders (encoding/json, apimachinery's util/json), so that no recursive walker, ours or a
//     library's, can exhaust the stack;
//   - an alias may not appear inside the node its anchor names.
//
// Real manifests, even a List of thousands of objects or a Helm-rendered stream, use a few aliases at
// most and never come near these limits.
package yamlbudget

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// MaxDepth is how many levels of mappings and sequences a document may nest, aliases expanded: yaml.v3's
// parser refuses text nested deeper, and encoding/json and apimachinery's JSON decoder refuse JSON
// nested deeper.
const MaxDepth = 10000

// The bounds of yaml.v2's and yaml.v3's alias ratio, copied here because both keep them unexported: up
// to ratioRangeLow nodes, 99% of a document may be copies made through aliases; from ratioRangeHigh, 10%;
// in between the share falls linearly, which keeps the copies of a document under about 400,000.
const (
	ratioRangeLow  = 400_000
	ratioRangeHigh = 4_000_000
	// minCopies and minNodes are the sizes under which yaml.v2 and yaml.v3 allow any ratio.
	minCopies = 100
	minNodes  = 1000
)

// allowedCopyRatio is the share of copies allowed in a document of nodes nodes, as yaml.v3's
// allowedAliasRatio computes it.
func allowedCopyRatio(nodes int64) float64 {
	switch {
	case nodes <= ratioRangeLow:
		return 0.99
	case nodes >= ratioRangeHigh:
		return 0.10
	default:
		return 0.99 - 0.89*(float64(nodes-ratioRangeLow)/float64(ratioRangeHigh-ratioRangeLow))
	}
}

// tooManyCopies reports whether copies out of nodes break the alias ratio.
func tooManyCopies(nodes, copies int64) bool {
	return copies > minCopies && nodes > minNodes && float64(copies)/float64(nodes) > allowedCopyRatio(nodes)
}

// saturated caps node counts: sizes that grow exponentially with the nesting of aliases stay
// representable, and any count this large is far over budget anyway.
const saturated = math.MaxInt64 / 4

func add(a, b int64) int64 { return min(a+min(b, saturated), saturated) }

// Error is a document over the budget: the line of the node at fault (the alias, or the collection
// nested too deep), as the node holds it, and what is wrong and what to do.
type Error struct {
	Line    int
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Message) }

// Budget checks documents against the limits (see the package documentation) and keeps the running
// totals of every document it checked. Use one Budget for all the documents of one input (one run of
// the CLI, one stream, one admission request); the zero Budget is ready to use. It is not safe for
// concurrent use.
type Budget struct {
	// written, copies and nodes are the totals of the documents checked and accepted: their nodes as
	// written, the copies their aliases make, and both.
	written, copies, nodes int64
	// measured holds the extent of every anchored node walked, for the aliases that name it, in this
	// document or a later one of the same stream (yaml.v3's anchors outlive a document).
	measured map[*yaml.Node]extent
}

// extent is the size of a node once its aliases are expanded: how many nodes it counts, itself
// included, and how many levels of collections it nests (0 for a scalar).
type extent struct {
	nodes  int64
	height int
}

// CheckStream parses every document of a YAML stream and returns an *Error for the first that is over
// the budget, on its own or with the documents before it. It reads the stream twice: as yaml.v3 splits
// it into documents, and as kustomize's kyaml does (at every line that starts with "---", whatever
// follows: "---#" is a separator to kyaml and text to yaml.v3), so that no document escapes the
// budget in one reading and reaches the other. A piece that does not parse is not its business: it is
// left to the reader that decodes it, which reports the syntax error.
func CheckStream(data []byte) error {
	if err := checkDocuments(data); err != nil {
		return err
	}
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	cuts := kyamlSeparator.FindAllStringIndex(text, -1)
	if len(cuts) == 0 {
		return nil
	}
	var b Budget
	start := 0
	for i := 0; i <= len(cuts); i++ {
		end := len(text)
		if i < len(cuts) {
			end = cuts[i][0]
		}
		offset := strings.Count(text[:start], "\n") // lines before the piece
		dec := yaml.NewDecoder(strings.NewReader(text[start:end]))
		for {
			var doc yaml.Node
			if dec.Decode(&doc) != nil {
				break
			}
			if err := b.Check(&doc); err != nil {
				var e *Error
				if errors.As(err, &e) {
					e.Line += offset
				}
				return err
			}
		}
		if i < len(cuts) {
			start = cuts[i][1]
		}
	}
	return nil
}

// kyamlSeparator is where kyaml cuts a stream into documents (its splitDocuments).
var kyamlSeparator = regexp.MustCompile(`\n---.*\n`)

// checkDocuments checks the documents of a stream as yaml.v3 reads them, up to the first that does
// not parse.
func checkDocuments(data []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var b Budget
	for {
		var doc yaml.Node
		if dec.Decode(&doc) != nil {
			return nil
		}
		if err := b.Check(&doc); err != nil {
			return err
		}
	}
}

// Check returns an *Error when doc (a document node, or any node of one) is over the budget on its own
// or together with the documents checked before; a document over the budget is not added to the totals.
func Check(doc *yaml.Node) error {
	var b Budget
	return b.Check(doc)
}

// Check returns an *Error when doc (a document node, or any node of one) is over the budget on its own
// or together with the documents b checked before; a document over the budget is not added to the
// totals.
func (b *Budget) Check(doc *yaml.Node) error {
	if doc == nil {
		return nil
	}
	if b.measured == nil {
		b.measured = map[*yaml.Node]extent{}
	}
	w := walk{budget: b, open: map[*yaml.Node]bool{}}
	w.visit(doc, 0, true)
	if err := w.result(); err != nil {
		return err
	}
	b.written = add(b.written, w.written)
	b.copies = add(b.copies, w.copies)
	b.nodes = add(b.nodes, w.nodes)
	return nil
}

// walk measures one document.
type walk struct {
	budget *Budget
	// open holds the anchored nodes being walked, and the nodes being measured for an alias: an alias
	// to one of them is a cycle.
	open map[*yaml.Node]bool
	// written counts the document's nodes as written, copies the nodes its aliases copy, and nodes
	// both: the document's nodes once expanded.
	written, copies, nodes int64
	// over is the alias at which the copies went over the ratio, first; overAll says whether only
	// the totals of the budget, not the document's own, went over.
	over    *yaml.Node
	overAll bool
	// stop ends the walk: an alias cycle or a nesting too deep, which leave the size unknown.
	stop *Error
}

// visit measures n, which has above collections above it once expanded, and returns its extent. count
// says whether n is part of the document as written (its nodes are counted), rather than an anchored
// node measured for an alias that names it from elsewhere. It recurses only as deep as the document
// nests, and never deeper than MaxDepth.
func (w *walk) visit(n *yaml.Node, above int, count bool) extent {
	if n == nil || w.stop != nil {
		return extent{}
	}
	if count {
		w.written = add(w.written, 1)
		w.nodes = add(w.nodes, 1)
	}
	if n.Kind == yaml.AliasNode {
		return w.alias(n, above, count)
	}
	level := above
	if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
		level++
		if level > MaxDepth {
			w.stop = &Error{Line: n.Line, Message: fmt.Sprintf("the document nests mappings and lists more than %d levels deep: no manifest does; flatten it", MaxDepth)}
			return extent{}
		}
	}
	if n.Anchor != "" {
		w.open[n] = true // in a parsed tree, an alias names an anchored node
	}
	e := extent{nodes: 1}
	for _, c := range n.Content {
		ce := w.visit(c, level, count)
		if w.stop != nil {
			return extent{}
		}
		e.nodes = add(e.nodes, ce.nodes)
		e.height = max(e.height, ce.height)
	}
	if level > above {
		e.height++
	}
	if n.Anchor != "" {
		delete(w.open, n)
		w.budget.measured[n] = e
	}
	return e
}

// alias measures an alias node: itself and a copy of the node its anchor names.
func (w *walk) alias(n *yaml.Node, above int, count bool) extent {
	t := n.Alias
	if t == nil {
		return extent{nodes: 1} // yaml.v3 refuses an unknown anchor while parsing
	}
	if w.open[t] {
		w.stop = &Error{Line: n.Line, Message: fmt.Sprintf("alias *%s is inside the value of its own anchor &%s (line %d), so that value never ends: write the inner value out instead of the alias", n.Value, t.Anchor, t.Line)}
		return extent{}
	}
	e, ok := w.budget.measured[t]
	if !ok {
		// Anchored in a document checked by another Budget, or a tree not built by yaml.v3's parser:
		// measure it here, without counting it as written.
		w.open[t] = true
		e = w.visit(t, above, false)
		if w.stop != nil {
			return extent{}
		}
		delete(w.open, t)
		w.budget.measured[t] = e
	}
	if above+e.height > MaxDepth {
		w.stop = &Error{Line: n.Line, Message: fmt.Sprintf("alias *%s nests the document more than %d levels deep once expanded: write the value out instead of the alias", n.Value, MaxDepth)}
		return extent{}
	}
	if count {
		w.nodes = add(w.nodes, e.nodes)
		w.copies = add(w.copies, e.nodes)
		if w.over == nil {
			switch {
			case tooManyCopies(w.nodes, w.copies):
				w.over = n
			case tooManyCopies(add(w.budget.nodes, w.nodes), add(w.budget.copies, w.copies)):
				w.over, w.overAll = n, true
			}
		}
	}
	return extent{nodes: add(e.nodes, 1), height: e.height}
}

// result returns the walk's verdict: nil, or the first problem met in the document's order.
func (w *walk) result() error {
	if w.over == nil {
		if w.stop != nil {
			return w.stop
		}
		return nil
	}
	size := "to " + thousands(w.nodes)
	if w.stop != nil || w.nodes >= saturated {
		size = "to more than " + thousands(w.nodes)
	}
	if w.overAll {
		return &Error{Line: w.over.Line, Message: fmt.Sprintf(
			"YAML aliases expand the input read so far to %s nodes from %s written: each document is within what Kubernetes' YAML readers accept, but together they copy more than one run reads (alias *%s is where it goes over): write the values out instead of aliasing them",
			thousands(add(w.budget.nodes, w.nodes)), thousands(add(w.budget.written, w.written)), w.over.Value)}
	}
	return &Error{Line: w.over.Line, Message: fmt.Sprintf(
		"YAML aliases expand this document %s nodes from %s written, more copying than Kubernetes' YAML readers accept (they refuse it as excessive aliasing; alias *%s is where it goes over): write the values out instead of aliasing them",
		size, thousands(w.written), w.over.Value)}
}

// thousands writes n with thousands separators.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
