package manifest

import (
	"fmt"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"github.com/karpenter-guard/karpenter-guard/objects"
)

// Fixtures. The line comments give each fixture's own line numbers.
const (
	nodePool = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: pool
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: nc}
      requirements:
        - key: karpenter.sh/capacity-type
          operator: In
          values: [spot]
` // 12 lines

	nodeClass = `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: nc
spec:
  amiSelectorTerms:
    - alias: al2023@latest
  role: KarpenterNodeRole
  userData: |
    ---
    #!/bin/bash
    ...
    echo hi
` // 13 lines

	awsAuth = `apiVersion: v1
kind: ConfigMap
metadata:
  name: aws-auth
  namespace: kube-system
data:
  mapRoles: |
    - rolearn: arn:aws:iam::111122223333:role/n
      groups: [system:nodes]
` // 9 lines
)

// join makes a multi-document file.
func join(docs ...string) string { return strings.Join(docs, "---\n") }

func parseString(t *testing.T, file, in string) ([]*objects.Object, []Error) {
	t.Helper()
	objs, _, errs := Parse(file, []byte(in))
	return objs, errs
}

func yamlError(t *testing.T, doc string) error {
	t.Helper()
	var n yaml.Node
	err := yaml.Unmarshal([]byte(doc), &n)
	if err == nil {
		t.Fatalf("%q parses without error", doc)
	}
	return err
}

// refs names the objects as "Kind name@line".
func refs(objs []*objects.Object) []string {
	var s []string
	for _, o := range objs {
		s = append(s, fmt.Sprintf("%s %s@%d", o.Kind, o.Name, o.Ref().Line))
	}
	return s
}

// findLine returns the line of the only occurrence of s in text.
func findLine(t *testing.T, text, s string) int {
	t.Helper()
	if strings.Count(text, s) != 1 {
		t.Fatalf("%q occurs %d times, want once", s, strings.Count(text, s))
	}
	return 1 + strings.Count(text[:strings.Index(text, s)], "\n")
}

func TestParseErrors(t *testing.T) {
	brokenIndent := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n bad: 1\n"
	for _, tc := range []struct {
		name    string
		file    string
		in      string
		line    int
		msg     []string // substrings of the message
		objects []string // the other documents, still read
	}{
		// Invalid YAML: the line of the error in the file, not in the document.
		{"bad indentation in the middle document", "f.yaml", join(nodePool, brokenIndent, nodeClass),
			18, []string{"invalid YAML", "did not find expected key"}, []string{"NodePool pool@1", "EC2NodeClass nc@20"}},
		{"bad indentation far below the mapping start", "f.yaml", join(nodePool, "# c\n# c\n"+nodeClass+"  bad: [\n   x: 1\n"),
			30, []string{"invalid YAML"}, []string{"NodePool pool@1"}},
		{"list item inside a mapping", "f.yaml", join(nodePool, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n- oops\n"),
			18, []string{"invalid YAML", "did not find expected key"}, []string{"NodePool pool@1"}},
		{"tab indentation", "f.yaml", join(nodePool, "apiVersion: v1\nkind: Pod\nmetadata:\n\tname: x\n"),
			17, []string{"invalid YAML", "character that cannot start any token"}, []string{"NodePool pool@1"}},
		{"unclosed flow mapping in the first document", "f.yaml", join("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x\n", nodePool),
			3, []string{"invalid YAML", "did not find expected ',' or '}'"}, []string{"NodePool pool@5"}},
		{"unterminated quote in the last document without newline", "f.yaml", join(nodePool, nodeClass, "apiVersion: v1\nkind: 'Pod\nmetadata: {}"),
			29, []string{"invalid YAML", "unexpected end of stream"}, []string{"NodePool pool@1", "EC2NodeClass nc@14"}},
		{"mapping value on one line", "f.yaml", join(nodePool, "apiVersion: v1\nkind: Pod: x\n"),
			15, []string{"invalid YAML", "mapping values are not allowed"}, []string{"NodePool pool@1"}},
		{"control character", "f.yaml", join(nodePool, "apiVersion: v1\nkind: Pod\nmetadata: {name: \"\x07\"}\n"),
			16, []string{"invalid YAML", "control characters"}, []string{"NodePool pool@1"}},
		{"duplicate key", "f.yaml", join(nodePool, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  name: b\n"),
			18, []string{`mapping key "name" already defined at line 17`}, []string{"NodePool pool@1"}},
		{"CRLF file keeps lines", "f.yaml", strings.ReplaceAll(join(nodePool, brokenIndent, nodeClass), "\n", "\r\n"),
			18, []string{"invalid YAML"}, []string{"NodePool pool@1", "EC2NodeClass nc@20"}},

		// Empty files.
		{"empty file", "f.yaml", "", 1, []string{"file is empty"}, nil},
		{"blank lines", "f.yaml", "\n\n\n", 1, []string{"file is empty"}, nil},
		{"comments only", "f.yaml", "# nothing here\n# at all\n", 1, []string{"file is empty: no Kubernetes object"}, nil},
		{"markers only", "f.yaml", "---\n# c\n---\n...\n", 1, []string{"file is empty"}, nil},
		{"empty json", "f.json", "", 1, []string{"file is empty"}, nil},

		// Binary data refuses the whole file.
		{"NUL byte", "f.yaml", nodePool + "\x00\x01\x02", 13, []string{"binary data, not YAML or JSON"}, nil},
		{"NUL on the first line", "f.yaml", "\x00" + nodePool, 1, []string{"binary data"}, nil},
		{"invalid UTF-8", "f.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: \xff}\n", 3, []string{"binary data"}, nil},
		{"invalid UTF-8 before a NUL", "f.yaml", "a: 1\nb: \xfe\nc: 3\n\x00\n", 2, []string{"binary data"}, nil},
		{"truncated UTF-8 sequence", "f.yaml", "a: 1\nb: \xc3", 2, []string{"binary data"}, nil},
		{"UTF-16", "f.yaml", "\xff\xfea\x00:\x00", 1, []string{"binary data"}, nil},
		{"binary json", "f.json", "{\"a\": \"\x00\"}", 1, []string{"binary data"}, nil},

		// Documents that are not Kubernetes objects.
		{"missing apiVersion", "f.yaml", join(nodePool, "kind: Pod\nmetadata: {name: x}\n"), 14, []string{"apiVersion is missing"}, []string{"NodePool pool@1"}},
		{"empty apiVersion", "f.yaml", join(nodePool, "apiVersion: ''\nkind: Pod\n"), 14, []string{"apiVersion is missing"}, []string{"NodePool pool@1"}},
		{"apiVersion not a string", "f.yaml", "apiVersion: [v1]\nkind: Pod\n", 1, []string{"apiVersion is missing or not a string"}, nil},
		{"missing kind", "f.yaml", join(nodePool, "# comment\napiVersion: v1\nmetadata: {name: x}\n"), 15, []string{"kind is missing"}, []string{"NodePool pool@1"}},
		{"kind not a string", "f.yaml", "apiVersion: v1\nkind: 5\n", 1, []string{"kind is missing or not a string"}, nil},

		// Karpenter kinds that do not exist (any more): the line of kind.
		{"Provisioner", "f.yaml", join(nodePool, "apiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata: {name: default}\n"),
			15, []string{"karpenter.sh Provisioner was removed in Karpenter v0.32", "karpenter.sh/v1 NodePool"}, []string{"NodePool pool@1"}},
		{"AWSNodeTemplate", "f.yaml", join("apiVersion: karpenter.k8s.aws/v1alpha1\n\nkind: AWSNodeTemplate\nmetadata: {name: default}\n", nodeClass),
			3, []string{"AWSNodeTemplate was removed", "karpenter.k8s.aws/v1 EC2NodeClass"}, []string{"EC2NodeClass nc@6"}},
		{"misspelt NodePool", "f.yaml", "apiVersion: karpenter.sh/v1\nkind: Nodepool\nmetadata: {name: a}\n",
			2, []string{"unknown Karpenter kind karpenter.sh/v1 Nodepool", "check the spelling"}, nil},
		{"unknown NodePool version", "f.yaml", "apiVersion: karpenter.sh/v1alpha5\nkind: NodePool\nmetadata: {name: a}\n",
			2, []string{"unknown Karpenter kind karpenter.sh/v1alpha5 NodePool"}, nil},
		{"unknown EC2NodeClass version", "f.yaml", "apiVersion: karpenter.k8s.aws/v2\nkind: EC2NodeClass\nmetadata: {name: a}\n",
			2, []string{"unknown Karpenter kind karpenter.k8s.aws/v2 EC2NodeClass"}, nil},
		{"EC2NodeClass in the karpenter.sh group", "f.yaml", "apiVersion: karpenter.sh/v1\nkind: EC2NodeClass\nmetadata: {name: a}\n",
			2, []string{"unknown Karpenter kind karpenter.sh/v1 EC2NodeClass"}, nil},
		{"NodePool in the AWS group", "f.yaml", "apiVersion: karpenter.k8s.aws/v1\nkind: NodePool\nmetadata: {name: a}\n",
			2, []string{"unknown Karpenter kind karpenter.k8s.aws/v1 NodePool"}, nil},
		{"Karpenter group without a version", "f.yaml", "apiVersion: karpenter.sh\nkind: NodePool\nmetadata: {name: a}\n",
			2, []string{"unknown Karpenter kind karpenter.sh NodePool"}, nil},

		// Recognised kinds without a name.
		{"NodePool without name", "f.yaml", join(nodeClass, "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {}\nspec: {}\n"),
			15, []string{"NodePool has no metadata.name"}, []string{"EC2NodeClass nc@1"}},
		{"EC2NodeClass without metadata", "f.yaml", "apiVersion: karpenter.k8s.aws/v1beta1\nkind: EC2NodeClass\nspec: {}\n",
			1, []string{"EC2NodeClass has no metadata.name"}, nil},

		// Wrong types in fields the views read: the line of the bad field.
		{"amiSelectorTerms as a string", "f.yaml", join(nodePool, strings.Replace(nodeClass, "\n    - alias: al2023@latest", " al2023@latest", 1)),
			19, []string{`EC2NodeClass "nc"`, "line 19: expected a list, found the string `al2023@"}, []string{"NodePool pool@1"}},
		{"requirements as a mapping", "f.yaml", join(nodeClass, strings.Replace(nodePool, "        - key:", "          key:", 1)),
			24, []string{`NodePool "pool"`, "line 24: expected a list, found a mapping"}, []string{"EC2NodeClass nc@1"}},
		{"weight not a number", "f.yaml", "apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata: {name: a}\nspec:\n  weight: heavy\n",
			5, []string{"line 5: expected a number, found the string `heavy`"}, nil},
		{"two wrong fields give the first line", "f.yaml", "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: a}\nspec:\n  role: [a]\n  amiSelectorTerms: x\n",
			5, []string{"line 5: expected a string", "line 6: expected a list"}, nil},
		{"aws-auth data as a string", "f.yaml", join(nodePool, awsAuth[:strings.Index(awsAuth, "\ndata:")+1]+"data: nope\n"),
			19, []string{`ConfigMap "aws-auth"`, "expected a mapping"}, []string{"NodePool pool@1"}},
		{"metadata as a string", "f.yaml", join(nodePool, "apiVersion: v1\nkind: Pod\nmetadata: pod-a\n"),
			16, []string{"line 16: expected a mapping, found the string `pod-a`"}, []string{"NodePool pool@1"}},
		{"annotations as a list", "f.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  annotations:\n  - a\n",
			6, []string{"expected a mapping, found a list"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, errs := parseString(t, tc.file, tc.in)
			if len(errs) != 1 {
				t.Fatalf("errors = %v, want one", errs)
			}
			e := errs[0]
			if e.File != tc.file || e.Line != tc.line {
				t.Errorf("error at %s:%d, want %s:%d (%s)", e.File, e.Line, tc.file, tc.line, e.Message)
			}
			for _, m := range tc.msg {
				if !strings.Contains(e.Message, m) {
					t.Errorf("message %q lacks %q", e.Message, m)
				}
			}
			if got := strings.Join(refs(objs), ", "); got != strings.Join(tc.objects, ", ") {
				t.Errorf("objects = [%s], want [%s]", got, strings.Join(tc.objects, ", "))
			}
		})
	}
}

// TestParseManyBrokenDocuments: each broken document gets its own error and none hides a good one.
func TestParseManyBrokenDocuments(t *testing.T) {
	in := join(
		"a: [\n",           // 1
		nodePool,           // 3-14
		"kind: Pod\n",      // 15-16
		"apiVersion: v1\n", // 17-18
		"- x\n",            // 19-20
		nodeClass,          // 21-34
		"foo: bar: baz\n",  // 35-36
		"apiVersion: karpenter.sh/v1beta1\nkind: Provisioner\n", // 37-39
	)
	objs, _, errs := Parse("many.yaml", []byte(in))
	if got, want := strings.Join(refs(objs), ", "), "NodePool pool@3, EC2NodeClass nc@22"; got != want {
		t.Errorf("objects = %s, want %s", got, want)
	}
	wantLines := []int{1, 16, 36, 39} // "apiVersion: v1" alone and "- x" are not objects: skipped
	if len(errs) != len(wantLines) {
		t.Fatalf("errors = %v, want %d", errs, len(wantLines))
	}
	for i, e := range errs {
		if e.Line != wantLines[i] || e.File != "many.yaml" {
			t.Errorf("error %d = %v, want line %d", i, e, wantLines[i])
		}
	}
}

func TestTrailingMarkerIsNotADocument(t *testing.T) {
	for _, in := range []string{
		nodePool + "---\n",
		nodePool + "---",
		"---\n" + nodePool + "---\n# end\n",
		"---\n---\n" + nodePool,
		nodePool + "...\n",
		nodePool + "--- # nothing\n...\n",
	} {
		objs, ignored, errs := Parse("f.yaml", []byte(in))
		if len(objs) != 1 || ignored != 0 || len(errs) != 0 {
			t.Errorf("Parse(%q) = %d objects, %d ignored, errors %v; want the NodePool only", in, len(objs), ignored, errs)
		}
	}
}

func TestDirectives(t *testing.T) {
	in := "%YAML 1.1\n---\n" + nodePool + "...\n%YAML 1.1\n%TAG !k! tag:karpenter.sh,2024:\n---\n" + nodeClass
	objs, _, errs := Parse("f.yaml", []byte(in))
	if len(errs) != 0 {
		t.Fatalf("errors: %v", errs)
	}
	if got, want := strings.Join(refs(objs), ", "), "NodePool pool@3, EC2NodeClass nc@19"; got != want {
		t.Errorf("objects = %s, want %s", got, want)
	}
}

func TestObjectLines(t *testing.T) {
	in := "# header\n" + join(nodePool, "# between\n"+nodeClass, awsAuth)
	objs, ignored, errs := Parse("multi.yaml", []byte(in))
	if len(errs) != 0 || ignored != 0 || len(objs) != 3 {
		t.Fatalf("%d objects, %d ignored, errors %v; want 3 objects", len(objs), ignored, errs)
	}
	np, nc, cm := objs[0], objs[1], objs[2]
	for _, tc := range []struct {
		name   string
		obj    *objects.Object
		offset int
		line   int
		end    int
	}{
		// The first document holds the header comment; the others start with their "---" line.
		{"NodePool", np, 0, 2, 13},
		{"EC2NodeClass", nc, 13, 16, 28},
		{"aws-auth", cm, 28, 30, 38},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.obj
			if o.File != "multi.yaml" || o.LineOffset != tc.offset || o.Ref().Line != tc.line || o.DocEndLine != tc.end {
				t.Errorf("file %q offset %d line %d end %d; want multi.yaml %d %d %d", o.File, o.LineOffset, o.Ref().Line, o.DocEndLine, tc.offset, tc.line, tc.end)
			}
			if o.Ref().File != "multi.yaml" || o.DocRoot != o.Root || o.JSON {
				t.Errorf("ref %+v, DocRoot is Root %v, JSON %v", o.Ref(), o.DocRoot == o.Root, o.JSON)
			}
		})
	}
	for _, tc := range []struct {
		name string
		obj  *objects.Object
		path []any
		find string
	}{
		{"NodePool name", np, []any{"metadata", "name"}, "name: pool"},
		{"requirement value", np, []any{"spec", "template", "spec", "requirements", 0, "values", 0}, "values: [spot]"},
		{"nodeClassRef in flow style", np, []any{"spec", "template", "spec", "nodeClassRef", "name"}, "nodeClassRef:"},
		{"AMI alias", nc, []any{"spec", "amiSelectorTerms", 0, "alias"}, "alias: al2023@latest"},
		{"userData block scalar", nc, []any{"spec", "userData"}, "userData: |"},
		{"role after the block scalar's markers", nc, []any{"spec", "role"}, "role: KarpenterNodeRole"},
		{"aws-auth namespace", cm, []any{"metadata", "namespace"}, "namespace: kube-system"},
		{"aws-auth mapRoles", cm, []any{"data", "mapRoles"}, "mapRoles: |"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := objects.Lookup(tc.obj.Root, tc.path...)
			if n == nil {
				t.Fatalf("no node at %s", objects.Path(tc.path...))
			}
			if got, want := tc.obj.LineOf(n), findLine(t, in, tc.find); got != want {
				t.Errorf("LineOf(%s) = %d, want %d", objects.Path(tc.path...), got, want)
			}
		})
	}
	if got := *nc.NodeClass.Spec.UserData; got != "---\n#!/bin/bash\n...\necho hi\n" {
		t.Errorf("userData = %q: the indented markers were cut", got)
	}
	if nc.NodeClass.Spec.Role != "KarpenterNodeRole" || np.NodePool.Spec.Template.Spec.Requirements[0].Values[0] != "spot" {
		t.Errorf("views not decoded: %+v %+v", nc.NodeClass.Spec, np.NodePool.Spec)
	}
}

func TestObjectLinesCRLF(t *testing.T) {
	in := join(nodePool, nodeClass)
	objs, _, errs := Parse("f.yaml", []byte(strings.ReplaceAll(in, "\n", "\r\n")))
	if len(errs) != 0 || len(objs) != 2 {
		t.Fatalf("%d objects, errors %v", len(objs), errs)
	}
	alias := objects.Lookup(objs[1].Root, "spec", "amiSelectorTerms", 0, "alias")
	if got, want := objs[1].LineOf(alias), findLine(t, in, "alias:"); got != want {
		t.Errorf("alias line = %d, want %d", got, want)
	}
	if objs[1].DocEndLine != 26 {
		t.Errorf("DocEndLine = %d, want 26", objs[1].DocEndLine)
	}
	if got := *objs[1].NodeClass.Spec.UserData; got != "---\n#!/bin/bash\n...\necho hi\n" {
		t.Errorf("userData = %q", got)
	}
}

func TestDocEndLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want []int
	}{
		{"single document", nodePool, []int{12}},
		{"no trailing newline", strings.TrimSuffix(nodePool, "\n"), []int{12}},
		{"trailing blank lines and comments belong to the document", nodePool + "\n# end\n", []int{14}},
		{"documents end before the next marker", join(nodePool, nodeClass, awsAuth), []int{12, 26, 36}},
		{"end marker", nodePool + "...\n" + nodeClass, []int{12, 26}},
		{"CRLF", strings.ReplaceAll(join(nodePool, awsAuth), "\n", "\r\n"), []int{12, 22}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, errs := parseString(t, "f.yaml", tc.in)
			if len(errs) != 0 || len(objs) != len(tc.want) {
				t.Fatalf("%d objects, errors %v", len(objs), errs)
			}
			for i, o := range objs {
				if o.DocEndLine != tc.want[i] {
					t.Errorf("object %d DocEndLine = %d, want %d", i, o.DocEndLine, tc.want[i])
				}
			}
		})
	}
}

// TestLinesWithOtherLineBreaks: yaml.v3 also breaks lines at a lone CR and at NEL, LS and PS and leaves
// a byte order mark out of columns; object lines and columns are still those of the file, where only LF
// ends a line.
func TestLinesWithOtherLineBreaks(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		// line and column in the file of the kind key and of the name value
		kindLine, kindCol, nameLine, nameCol int
	}{
		{"lone CR in a comment", "# old\r# mac\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: aws-auth}\n", 3, 1, 4, 18},
		{"lone CR between keys", "apiVersion: v1\rkind: ConfigMap\nmetadata:\r  name: aws-auth\n", 1, 16, 2, 19},
		{"NEL in a comment", "# a\u0085# b\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: aws-auth}\n", 3, 1, 4, 18},
		{"LS inside a quoted value", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: aws-auth, annotations: {a: \"x\u2028y\"}}\ndata: {b: c}\n" +
			"# \u2029\nx: {name: aws-auth}\n", 2, 1, 3, 18},
		{"byte order mark", "\uFEFFkind: ConfigMap\napiVersion: v1\nmetadata: {name: aws-auth}\n", 1, 2, 3, 18},
		{"byte order mark and lone CR", "\uFEFFapiVersion: v1\rkind: ConfigMap\rmetadata: {name: aws-auth}\n", 1, 17, 1, 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, errs := parseString(t, "f.yaml", tc.in)
			if len(errs) != 0 || len(objs) != 1 {
				t.Fatalf("%d objects, errors %v", len(objs), errs)
			}
			o := objs[0]
			kind, _ := objects.MapEntry(o.Root, "kind")
			name := objects.Lookup(o.Root, "metadata", "name")
			if o.LineOf(kind) != tc.kindLine || kind.Column != tc.kindCol {
				t.Errorf("kind at %d:%d, want %d:%d", o.LineOf(kind), kind.Column, tc.kindLine, tc.kindCol)
			}
			if o.LineOf(name) != tc.nameLine || name.Column != tc.nameCol {
				t.Errorf("name at %d:%d, want %d:%d", o.LineOf(name), name.Column, tc.nameLine, tc.nameCol)
			}
			// The column counts characters from the start of the file line.
			lines := strings.Split(tc.in, "\n")
			if got := string([]rune(lines[o.LineOf(name)-1])[name.Column-1:]); !strings.HasPrefix(got, "aws-auth") {
				t.Errorf("text at the name's position = %q", got)
			}
		})
	}
	// The same in the second document of a file, and in an error.
	in := join(nodePool, "apiVersion: v1\rkind: Pod\rmetadata: {name: a}\rmetadata: {name: b}\n")
	_, errs := parseString(t, "f.yaml", in)
	if len(errs) != 1 || errs[0].Line != 14 || !strings.Contains(errs[0].Message, "line 14: mapping key \"metadata\" already defined at line 14") {
		t.Errorf("errors = %v, want one at line 14", errs)
	}
	_, errs = parseString(t, "f.yaml", "a: 1\rb: [\rc: 2\n")
	if len(errs) != 1 || errs[0].Line != 1 {
		t.Errorf("errors = %v, want one at line 1", errs)
	}
}

func TestListExpansion(t *testing.T) {
	list := `apiVersion: v1
kind: List
items:
- apiVersion: karpenter.sh/v1
  kind: NodePool
  metadata: {name: a}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: d}
- apiVersion: karpenter.k8s.aws/v1
  kind: EC2NodeClass
  metadata: {name: b}
  spec:
    amiSelectorTerms: wrong
- just a string
- apiVersion: v1
  kind: ConfigMapList
  items:
  - apiVersion: v1
    kind: ConfigMap
    metadata: {name: aws-auth, namespace: kube-system}
`
	for _, tc := range []struct {
		name   string
		in     string
		shift  int // file line of list line 1, minus 1
		offset int // LineOffset: the second document starts with its "---" line
	}{
		{"alone", list, 0, 0},
		{"second document", join(nodePool, list), 13, 12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, ignored, errs := Parse("list.yaml", []byte(tc.in))
			if tc.shift > 0 {
				objs = objs[1:] // the NodePool before the List
			}
			if got, want := strings.Join(refs(objs), ", "), fmt.Sprintf("NodePool a@%d, ConfigMap aws-auth@%d", 4+tc.shift, 19+tc.shift); got != want {
				t.Errorf("objects = %s, want %s", got, want)
			}
			if ignored != 1 {
				t.Errorf("ignored = %d, want 1 (the Deployment)", ignored)
			}
			if len(errs) != 2 || errs[0].Line != 14+tc.shift || !strings.Contains(errs[0].Message, "expected a list") ||
				errs[1].Line != 15+tc.shift || !strings.Contains(errs[1].Message, "not a Kubernetes object") {
				t.Errorf("errors = %v, want lines %d (wrong type) and %d (not an object)", errs, 14+tc.shift, 15+tc.shift)
			}
			for _, o := range objs {
				if o.DocRoot == nil || o.DocRoot == o.Root || objects.Lookup(o.DocRoot, "kind").Value != "List" {
					t.Errorf("%s: DocRoot is not the List", o.Ref())
				}
				if o.DocEndLine != 21+tc.shift || o.LineOffset != tc.offset || o.File != "list.yaml" {
					t.Errorf("%s: DocEndLine %d, LineOffset %d, file %q", o.Ref(), o.DocEndLine, o.LineOffset, o.File)
				}
			}
			if objs[1].AWSAuth == nil || objs[0].NodePool == nil {
				t.Error("views not set on list items")
			}
		})
	}
}

func TestListEdgeCases(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      string
		objects int
		ignored int
		errs    int
	}{
		{"empty items", "apiVersion: v1\nkind: List\nitems: []\n", 0, 0, 0},
		{"no items: a List object of its own", "apiVersion: v1\nkind: List\nmetadata: {}\n", 0, 1, 0},
		{"items not a list", "apiVersion: v1\nkind: List\nitems: {a: b}\n", 0, 1, 0},
		{"kind not ending in List", "apiVersion: v1\nkind: Lists\nitems: [{apiVersion: karpenter.sh/v1, kind: NodePool, metadata: {name: a}}]\n", 0, 1, 0},
		{"NodePoolList", "apiVersion: karpenter.sh/v1\nkind: NodePoolList\nitems: [{apiVersion: karpenter.sh/v1, kind: NodePool, metadata: {name: a}}]\n", 1, 0, 0},
		{"null item", "apiVersion: v1\nkind: List\nitems:\n-\n", 0, 0, 1},
		{"alias to an object is read", "apiVersion: v1\nkind: List\nitems:\n- &p {apiVersion: karpenter.sh/v1, kind: NodePool, metadata: {name: a}}\n- *p\n", 2, 0, 0},
		{"List containing itself", "&l {apiVersion: v1, kind: List, items: [*l]}\n", 0, 0, 1},
		{"items containing themselves", "apiVersion: v1\nkind: List\nitems: &i\n- {apiVersion: v1, kind: List, items: *i}\n", 0, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, ignored, errs := Parse("f.yaml", []byte(tc.in))
			if len(objs) != tc.objects || ignored != tc.ignored || len(errs) != tc.errs {
				t.Errorf("%d objects, %d ignored, errors %v; want %d, %d, %d", len(objs), ignored, errs, tc.objects, tc.ignored, tc.errs)
			}
			for _, e := range errs {
				if e.Line < 1 {
					t.Errorf("error without line: %v", e)
				}
			}
		})
	}
}

// TestListAliasBomb: Lists repeated through aliases would expand to 3^40 objects; the document is
// refused as a whole, at the alias where the copies go over the budget, before any List is expanded.
func TestListAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: List\nitems:\n")
	b.WriteString("- &l0 {apiVersion: v1, kind: List, items: [{apiVersion: karpenter.sh/v1, kind: NodePool, metadata: {name: a}}]}\n")
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "- &l%d {apiVersion: v1, kind: List, items: [*l%d, *l%d, *l%d]}\n", i, i-1, i-1, i-1)
	}
	objs, _, errs := Parse("bomb.yaml", []byte(b.String()))
	if len(objs) != 0 || len(errs) != 1 {
		t.Fatalf("%d objects, errors %v; want none and one error", len(objs), errs)
	}
	if errs[0].Line != 9 || !strings.Contains(errs[0].Message, "YAML aliases expand this document to more than") {
		t.Errorf("error = %v, want line 9 (alias *l4) and the budget", errs[0])
	}
}

// TestListRepeatedThroughAlias: a List within the budget that an alias repeats is expanded once, and
// the repetition is an error.
func TestListRepeatedThroughAlias(t *testing.T) {
	doc := "apiVersion: v1\nkind: List\nitems:\n- &l {apiVersion: v1, kind: List, items: [{apiVersion: karpenter.sh/v1, kind: NodePool, metadata: {name: a}}]}\n- *l\n"
	objs, _, errs := Parse("list.yaml", []byte(doc))
	if len(objs) != 1 || len(errs) != 1 || errs[0].Line != 5 || !strings.Contains(errs[0].Message, "List repeated through a YAML alias") {
		t.Errorf("objects %v, errors %v; want one object and the repetition at line 5", refs(objs), errs)
	}
}

func TestJSON(t *testing.T) {
	tabbed := "{\n\t\"apiVersion\": \"karpenter.k8s.aws/v1\",\n\t\"kind\": \"EC2NodeClass\",\n\t\"metadata\": {\n\t\t\"name\": \"j\"\n\t},\n" +
		"\t\"spec\": {\n\t\t\"amiSelectorTerms\": [\n\t\t\t{\"alias\": \"al2023@latest\"}\n\t\t],\n\t\t\"role\": \"r\"\n\t}\n}\n"
	t.Run("tab-indented", func(t *testing.T) {
		for _, file := range []string{"nc.json", "NC.JSON", "nc.yaml"} {
			objs, errs := parseString(t, file, tabbed)
			if len(errs) != 0 || len(objs) != 1 {
				t.Fatalf("%s: %d objects, errors %v", file, len(objs), errs)
			}
			o := objs[0]
			alias := objects.Lookup(o.Root, "spec", "amiSelectorTerms", 0, "alias")
			if !o.JSON || o.Ref().Line != 1 || o.LineOf(alias) != 9 || o.DocEndLine != 13 || o.NodeClass.Spec.AMISelectorTerms[0].Alias != "al2023@latest" {
				t.Errorf("%s: JSON %v, line %d, alias line %d, end %d, view %+v", file, o.JSON, o.Ref().Line, o.LineOf(alias), o.DocEndLine, o.NodeClass.Spec)
			}
		}
	})
	t.Run("one line", func(t *testing.T) {
		objs, errs := parseString(t, "p.json", `{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"p"}}`)
		if len(errs) != 0 || len(objs) != 1 || objs[0].Ref().Line != 1 || objs[0].DocEndLine != 1 || !objs[0].JSON {
			t.Errorf("objects %v, errors %v", refs(objs), errs)
		}
	})
	t.Run("JSON documents in a YAML stream", func(t *testing.T) {
		objs, errs := parseString(t, "s.yaml", join(tabbed, tabbed, nodePool))
		if len(errs) != 0 || len(objs) != 3 || !objs[1].JSON || objs[2].JSON || objs[1].Ref().Line != 15 {
			t.Errorf("objects %v, errors %v", refs(objs), errs)
		}
	})
	t.Run("List", func(t *testing.T) {
		in := "{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [\n" +
			"  {\"apiVersion\": \"karpenter.sh/v1\", \"kind\": \"NodePool\", \"metadata\": {\"name\": \"a\"}},\n" +
			"  {\"apiVersion\": \"v1\", \"kind\": \"Service\", \"metadata\": {\"name\": \"s\"}},\n" +
			"  {\"apiVersion\": \"karpenter.k8s.aws/v1\", \"kind\": \"EC2NodeClass\", \"metadata\": {\"name\": \"b\"}}\n]}\n"
		objs, ignored, errs := Parse("l.json", []byte(in))
		if got := strings.Join(refs(objs), ", "); got != "NodePool a@2, EC2NodeClass b@4" || ignored != 1 || len(errs) != 0 {
			t.Errorf("objects %s, ignored %d, errors %v", got, ignored, errs)
		}
	})
	for _, tc := range []struct {
		name string
		in   string
		line int
		msg  string
	}{
		// The line that lacks the comma.
		{"missing comma", "{\n\t\"apiVersion\": \"v1\",\n\t\"kind\": \"Pod\"\n\t\"metadata\": {\"name\": \"x\"}\n}\n", 3, "did not find expected ',' or '}'"},
		{"unclosed object", "{\n\t\"apiVersion\": \"v1\",\n\t\"kind\": \"Pod\",\n", 1, "invalid YAML"},
		{"wrong type", "{\"apiVersion\": \"karpenter.k8s.aws/v1\", \"kind\": \"EC2NodeClass\",\n \"metadata\": {\"name\": \"x\"},\n \"spec\": {\"amiSelectorTerms\": \"al2023@latest\"}}\n", 3, "expected a list, found the string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errs := parseString(t, "bad.json", tc.in)
			if len(errs) != 1 || errs[0].File != "bad.json" || errs[0].Line != tc.line || !strings.Contains(errs[0].Message, tc.msg) {
				t.Errorf("errors = %v, want one at bad.json:%d with %q", errs, tc.line, tc.msg)
			}
		})
	}
}

func TestRecognisedAndIgnored(t *testing.T) {
	for _, tc := range []struct {
		name string
		doc  string
		view string // "NodeClass", "NodePool", "AWSAuth" or "" for ignored
	}{
		{"EC2NodeClass v1", "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: a}\n", "NodeClass"},
		{"EC2NodeClass v1beta1", "apiVersion: karpenter.k8s.aws/v1beta1\nkind: EC2NodeClass\nmetadata: {name: a}\n", "NodeClass"},
		{"NodePool v1", "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: a}\n", "NodePool"},
		{"NodePool v1beta1", "apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata: {name: a}\n", "NodePool"},
		{"aws-auth in kube-system", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: aws-auth, namespace: kube-system}\n", "AWSAuth"},
		{"aws-auth without namespace", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: aws-auth}\n", "AWSAuth"},
		{"aws-auth in another namespace", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: aws-auth, namespace: default}\n", ""},
		{"another ConfigMap", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other, namespace: kube-system}\n", ""},
		{"aws-auth in another group", "apiVersion: example.com/v1\nkind: ConfigMap\nmetadata: {name: aws-auth}\n", ""},
		{"Deployment", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: 1}\n", ""},
		{"object without a name", "apiVersion: v1\nkind: Namespace\n", ""},
		{"NodeClaim v1", "apiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata: {name: c}\n", ""},
		{"NodeClaim v1beta1", "apiVersion: karpenter.sh/v1beta1\nkind: NodeClaim\nmetadata: {name: c}\n", ""},
		{"NodeOverlay", "apiVersion: karpenter.sh/v1alpha1\nkind: NodeOverlay\nmetadata: {name: o}\n", ""},
		{"CRD of another karpenter-like group", "apiVersion: karpenter.example.com/v1\nkind: Provisioner\nmetadata: {name: p}\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Behind a NodePool, so that the count is per document.
			objs, ignored, errs := Parse("f.yaml", []byte(join(nodePool, tc.doc)))
			if len(errs) != 0 {
				t.Fatalf("errors: %v", errs)
			}
			if tc.view == "" {
				if len(objs) != 1 || ignored != 1 {
					t.Errorf("%d objects, %d ignored; want the document ignored", len(objs), ignored)
				}
				return
			}
			if len(objs) != 2 || ignored != 0 {
				t.Fatalf("%d objects, %d ignored; want the document recognised", len(objs), ignored)
			}
			o := objs[1]
			got := map[string]bool{"NodeClass": o.NodeClass != nil, "NodePool": o.NodePool != nil, "AWSAuth": o.AWSAuth != nil}
			for v, set := range got {
				if set != (v == tc.view) {
					t.Errorf("view %s set = %v", v, set)
				}
			}
			if o.Name == "" || o.Ref().Line != 14 {
				t.Errorf("ref %+v", o.Ref())
			}
		})
	}
	t.Run("counts add up", func(t *testing.T) {
		in := join(nodePool, "apiVersion: v1\nkind: Service\nmetadata: {name: s}\n", "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n",
			nodeClass, "broken: [\n", "apiVersion: v1\nkind: List\nitems: [{apiVersion: v1, kind: Pod, metadata: {name: p}}]\n")
		objs, ignored, errs := Parse("f.yaml", []byte(in))
		if len(objs) != 2 || ignored != 3 || len(errs) != 1 {
			t.Errorf("%d objects, %d ignored, %d errors; want 2, 3, 1", len(objs), ignored, len(errs))
		}
	})
}

func TestOtherNodeClasses(t *testing.T) {
	aks := objects.NodeClassRef{Group: "karpenter.azure.com", Kind: "AKSNodeClass", Name: "default"}
	for _, tc := range []struct {
		name string
		doc  string
		want []objects.NodeClassRef
	}{
		{"AKSNodeClass", "apiVersion: karpenter.azure.com/v1beta1\nkind: AKSNodeClass\nmetadata: {name: default}\nspec: {imageFamily: Ubuntu}\n", []objects.NodeClassRef{aks}},
		{"AKSNodeClass in a List", "apiVersion: v1\nkind: List\nitems:\n  - {apiVersion: karpenter.azure.com/v1alpha2, kind: AKSNodeClass, metadata: {name: default}}\n", []objects.NodeClassRef{aks}},
		{"name through an alias", "apiVersion: karpenter.azure.com/v1beta1\nkind: AKSNodeClass\nmetadata: {name: &n default}\nspec: {image: *n}\n", []objects.NodeClassRef{aks}},
		{"another provider", "apiVersion: karpenter.k8s.gcp/v1alpha1\nkind: GCENodeClass\nmetadata: {name: g}\n", []objects.NodeClassRef{{Group: "karpenter.k8s.gcp", Kind: "GCENodeClass", Name: "g"}}},
		{"EC2NodeClass", nodeClass, nil},
		{"unknown kind of AWS's group", "apiVersion: karpenter.k8s.aws/v1\nkind: OtherNodeClass\nmetadata: {name: x}\n", nil},
		{"without a name", "apiVersion: karpenter.azure.com/v1beta1\nkind: AKSNodeClass\nmetadata: {}\n", nil},
		{"without a group", "apiVersion: v1\nkind: AKSNodeClass\nmetadata: {name: default}\n", nil},
		{"not a node class", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: default}\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Set{}
			s.Add(Source{Path: "f.yaml", Data: []byte(join(nodePool, tc.doc))})
			if fmt.Sprint(s.OtherNodeClasses) != fmt.Sprint(tc.want) {
				t.Errorf("OtherNodeClasses = %+v, want %+v (errors %v)", s.OtherNodeClasses, tc.want, s.Errors)
			}
		})
	}
}

func TestBinaryLine(t *testing.T) {
	for _, tc := range []struct {
		in   string
		line int
		bad  bool
	}{
		{"", 0, false},
		{"plain text\nwith ünïcödé ✓\n", 0, false},
		{"\x00", 1, true},
		{"a\nb\nc\x00", 3, true},
		{"a\n\xff\n\x00", 2, true},
		{"a\n\n\n\x00\xff", 4, true},
		{"a\n\xe2\x82", 2, true},
	} {
		line, bad := binaryLine([]byte(tc.in))
		if line != tc.line || bad != tc.bad {
			t.Errorf("binaryLine(%q) = %d, %v; want %d, %v", tc.in, line, bad, tc.line, tc.bad)
		}
	}
}

func TestErrorString(t *testing.T) {
	if got := (Error{File: "a.yaml", Line: 3, Message: "bad"}).Error(); got != "a.yaml:3: bad" {
		t.Errorf("got %q", got)
	}
	if got := (Error{File: "dir", Message: "cannot read: x"}).Error(); got != "dir: cannot read: x" {
		t.Errorf("got %q", got)
	}
}

// TestNotObjectsAreSkipped: documents that are not Kubernetes objects at all (no kind: Helm's
// Chart.yaml and values, kustomizations), as a repository root holds beside its manifests, are counted
// and skipped, never errors; a kind without an apiVersion is a broken manifest and stays an error.
func TestNotObjectsAreSkipped(t *testing.T) {
	for _, tc := range []struct {
		name, file, in            string
		objects, notObjects, errs int
	}{
		{"Chart.yaml", "Chart.yaml", "apiVersion: v2\nname: demo\nversion: 0.1.0\n", 0, 1, 0},
		{"values.yaml", "values.yaml", "replicaCount: 2\nimage:\n  tag: v1\n", 0, 1, 0},
		{"kustomization without kind", "kustomization.yaml", "resources:\n- nodepool.yaml\n", 0, 1, 0},
		{"sequence document", "f.yaml", join(nodePool, "- a\n- b\n"), 1, 1, 0},
		{"scalar document", "f.yaml", join("just text\n", nodePool), 1, 1, 0},
		{"explicit null document", "f.yaml", join(nodePool, "null\n"), 1, 1, 0},
		{"JSON array", "bad.json", "[\n  {\"apiVersion\": \"v1\"}\n]\n", 0, 1, 0},
		{"JSON string", "bad.json", "\n\"hello\"\n", 0, 1, 0},
		{"kind without apiVersion", "f.yaml", "kind: Pod\n", 0, 0, 1},
		{"apiVersion without kind", "f.yaml", "apiVersion: v1\n", 0, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := &Set{}
			set.Add(Source{Path: tc.file, Data: []byte(tc.in)})
			if len(set.Objects) != tc.objects || set.NotObjects != tc.notObjects || len(set.Errors) != tc.errs {
				t.Errorf("%d objects, %d not objects, errors %v; want %d, %d, %d", len(set.Objects), set.NotObjects, set.Errors, tc.objects, tc.notObjects, tc.errs)
			}
		})
	}
}
