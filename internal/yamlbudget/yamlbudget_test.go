package yamlbudget

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// laughs returns a "billion laughs" document: levels anchors, each a list of width aliases to the one
// before.
func laughs(levels, width int) string {
	var b strings.Builder
	b.WriteString("apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: bomb\nspec:\n  tags:\n    a0: &a0 lol\n")
	for i := 1; i <= levels; i++ {
		fmt.Fprintf(&b, "    a%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d,", i-1), width), ","))
	}
	return b.String()
}

// nested returns depth flow sequences, one inside the other, around a scalar.
func nested(depth int) string {
	return strings.Repeat("[", depth) + "x" + strings.Repeat("]", depth)
}

func parse(t *testing.T, doc string) *yaml.Node {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &n); err != nil {
		t.Fatalf("parse: %v", err)
	}
	return &n
}

func TestCheck(t *testing.T) {
	bigList := func() string {
		// A List of 2,000 NodePools written out, each using the same requirements through an alias.
		var b strings.Builder
		b.WriteString("apiVersion: v1\nkind: List\nreq: &req\n- {key: karpenter.sh/capacity-type, operator: In, values: [spot, on-demand]}\n- {key: kubernetes.io/arch, operator: In, values: [amd64, arm64]}\nitems:\n")
		for i := range 2000 {
			fmt.Fprintf(&b, "- apiVersion: karpenter.sh/v1\n  kind: NodePool\n  metadata: {name: pool-%d, labels: {team: t%d}}\n  spec:\n    template:\n      spec:\n        nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n        requirements: *req\n    limits: {cpu: %d}\n", i, i, i)
		}
		return b.String()
	}
	for _, tc := range []struct {
		name string
		doc  string
		line int    // 0 when the document passes
		msg  string // in the message when it does not
	}{
		{name: "billion laughs", doc: laughs(9, 9), line: 11, msg: "YAML aliases expand this document to 980,658,124 nodes from 115 written"},
		{name: "laughs in the thousands of levels", doc: laughs(2000, 2), line: 17, msg: "to more than 2,305,843,009,213,693,951 nodes"},
		{name: "merge key inside its own anchor", doc: "spec:\n  tags: &b {<<: *b}\n", line: 2, msg: "alias *b is inside the value of its own anchor &b (line 2)"},
		{name: "alias inside its own list", doc: "spec:\n  subnets: &s\n  - a\n  - *s\n", line: 4, msg: "alias *s is inside the value of its own anchor &s (line 2)"},
		{name: "mapping value inside its own anchor", doc: "a: &a {b: {c: *a}}\n", line: 1, msg: "alias *a is inside the value of its own anchor &a"},
		{name: "mutual references", doc: "a: &a\n  b: &b\n    c: *a\n  d: *b\n", line: 3, msg: "alias *a is inside the value of its own anchor &a (line 1)"},
		{name: "document is its own anchor", doc: "&d [*d]\n", line: 1, msg: "alias *d is inside"},
		{name: "aliases nest too deep", doc: "a: &a " + nested(6000) + "\nb: &b [*a]\nc: " + strings.Repeat("[", 4001) + "*b" + strings.Repeat("]", 4001) + "\n", line: 3, msg: "alias *b nests the document more than 10000 levels deep"},
		{name: "block and flow nest too deep", doc: strings.Repeat("- ", 5001) + nested(5001) + "\n", line: 1, msg: "nests mappings and lists more than 10000 levels deep"},
		{name: "as deep as yaml.v3 parses", doc: nested(9999) + "\n"},
		{name: "anchors used normally", doc: "tags: &t {team: a, env: prod}\nblock:\n  tags: *t\n  more:\n    <<: *t\n    extra: x\nlist: [*t, *t, *t]\n"},
		{name: "a List of 2,000 NodePools sharing requirements", doc: bigList()},
		{name: "no aliases", doc: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: b}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Check(parse(t, tc.doc))
			if tc.line == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var be *Error
			if !errors.As(err, &be) {
				t.Fatalf("got %v, want an *Error at line %d", err, tc.line)
			}
			if be.Line != tc.line || !strings.Contains(be.Message, tc.msg) {
				t.Errorf("got line %d: %s\nwant line %d: …%s…", be.Line, be.Message, tc.line, tc.msg)
			}
		})
	}
}

// TestSameVerdictAsYAMLDecoder: the alias budget refuses exactly what yaml.v3 refuses as excessive
// aliasing when it decodes the same document into Go values, around the limits.
func TestSameVerdictAsYAMLDecoder(t *testing.T) {
	refused := 0
	for _, size := range []int{1, 9, 10, 11, 99, 100, 500} {
		for _, refs := range []int{1, 9, 10, 11, 90, 100, 101, 110, 1000} {
			for _, pad := range []int{0, 10, 100} {
				doc := fmt.Sprintf("a: &a [%s]\npad: [%s]\nb: [%s]\n", strings.Repeat("x,", size), strings.Repeat("p,", pad), strings.Repeat("*a,", refs))
				var v any
				decodeErr := yaml.Unmarshal([]byte(doc), &v)
				err := Check(parse(t, doc))
				if (decodeErr != nil) != (err != nil) {
					t.Errorf("anchor of %d items, %d aliases, %d other items: yaml.v3 says %v, the budget %v", size, refs, pad, decodeErr, err)
				}
				if err != nil {
					refused++
				}
			}
		}
	}
	if refused == 0 {
		t.Error("no document of the grid went over the budget: the grid tests nothing")
	}
}

// TestBudgetAddsUpDocuments: documents that each pass alone are refused once their copies add up past
// the budget, and a document over the budget is not counted.
func TestBudgetAddsUpDocuments(t *testing.T) {
	// 200 written nodes copied 99 times: 19,900 copies of 20,200 nodes, 98.5%, under the 99% limit.
	doc := fmt.Sprintf("a: &a [%s]\nb: [%s]\n", strings.Repeat("x,", 196), strings.Repeat("*a,", 100))
	if err := Check(parse(t, doc)); err != nil {
		t.Fatalf("one document alone: %v", err)
	}
	var b Budget
	var err error
	n := 0
	for ; n < 100 && err == nil; n++ {
		err = b.Check(parse(t, doc))
	}
	if err == nil {
		t.Fatal("100 documents of 20,000 copies each passed together")
	}
	if !strings.Contains(err.Error(), "expand the input read so far to") {
		t.Errorf("the error does not say the budget is the input's: %v", err)
	}
	if n < 20 {
		t.Errorf("refused at document %d: the running budget allows about 400,000 copies, 20 documents' worth", n)
	}
	before := b
	if err := b.Check(parse(t, laughs(9, 9))); err == nil {
		t.Fatal("a bomb passed")
	}
	if before.nodes != b.nodes || before.copies != b.copies {
		t.Error("a document over the budget was counted")
	}
}

// TestAnchorsAcrossDocuments: yaml.v3 keeps anchors from one document of a stream to the next, so an
// alias may name a node of an earlier document; a Budget over the stream measures it once.
func TestAnchorsAcrossDocuments(t *testing.T) {
	stream := "a: &a [x, y]\n---\nb: [*a, *a]\n---\nc: &c [*c]\n"
	dec := yaml.NewDecoder(strings.NewReader(stream))
	var b Budget
	var errs []error
	for range 3 {
		var n yaml.Node
		if err := dec.Decode(&n); err != nil {
			t.Fatal(err)
		}
		errs = append(errs, b.Check(&n))
	}
	if errs[0] != nil || errs[1] != nil {
		t.Errorf("documents with normal aliases refused: %v", errs)
	}
	if errs[2] == nil || !strings.Contains(errs[2].Error(), "alias *c is inside") {
		t.Errorf("the self-reference of the third document: %v", errs[2])
	}
	// The same second document, checked by a Budget that did not see the first.
	dec = yaml.NewDecoder(strings.NewReader(stream))
	var first, second yaml.Node
	if dec.Decode(&first) != nil || dec.Decode(&second) != nil {
		t.Fatal("decode")
	}
	if err := Check(&second); err != nil {
		t.Errorf("an alias to an earlier document, checked alone: %v", err)
	}
}

// TestHandBuiltCycle: a tree built in code may alias a node without an anchor; a cycle through it is
// found too.
func TestHandBuiltCycle(t *testing.T) {
	seq := &yaml.Node{Kind: yaml.SequenceNode, Line: 1}
	seq.Content = []*yaml.Node{{Kind: yaml.AliasNode, Value: "s", Alias: seq, Line: 2}, {Kind: yaml.AliasNode, Value: "s", Alias: seq, Line: 3}}
	err := Check(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{seq}})
	if err == nil || !strings.Contains(err.Error(), "line 2: alias *s is inside") {
		t.Errorf("got %v", err)
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 980658145: "980,658,145"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

func BenchmarkCheckList(b *testing.B) {
	var doc strings.Builder
	doc.WriteString("apiVersion: v1\nkind: List\nitems:\n")
	for i := range 5000 {
		fmt.Fprintf(&doc, "- apiVersion: karpenter.sh/v1\n  kind: NodePool\n  metadata: {name: pool-%d}\n  spec: {template: {spec: {requirements: [{key: a, operator: In, values: [x, y]}]}}}\n", i)
	}
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(doc.String()), &n); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := Check(&n); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCheckStreamAsKustomizeSplitsIt: kyaml cuts a stream at every line starting with "---", "---#"
// included, where yaml.v3 sees text; a bomb behind such a line is over the budget in kustomize's
// reading, so CheckStream refuses it, at its line in the stream. A stream without such a line is
// checked once, as yaml.v3 reads it.
func TestCheckStreamAsKustomizeSplitsIt(t *testing.T) {
	head := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: first}\n"
	for _, tc := range []struct {
		name   string
		stream string
		line   int // 0: within the budget
	}{
		{"plain separator", head + "---\n" + laughs(9, 9), 15},
		{"separator with a comment glued on", head + "---#\n" + laughs(9, 9), 15},
		{"separator with text after it", head + "--- # x\n" + laughs(9, 9), 15},
		{"CRLF line ends", strings.ReplaceAll(head+"---#\n"+laughs(9, 9), "\n", "\r\n"), 15},
		{"within the budget", head + "---#\n" + laughs(2, 3), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckStream([]byte(tc.stream))
			var e *Error
			switch {
			case tc.line == 0 && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.line != 0 && !errors.As(err, &e):
				t.Fatalf("error = %v, want the bomb refused", err)
			case tc.line != 0 && e.Line != tc.line:
				t.Errorf("line %d, want %d: %v", e.Line, tc.line, err)
			}
		})
	}
}
