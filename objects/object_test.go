package objects

import (
	"errors"
	"fmt"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

func TestRefString(t *testing.T) {
	for _, tc := range []struct {
		ref  Ref
		want string
	}{
		{Ref{Kind: "NodePool", Name: "default"}, `NodePool "default"`},
		{Ref{Kind: "ConfigMap", Name: "aws-auth", Namespace: "kube-system"}, `ConfigMap "kube-system/aws-auth"`},
		{Ref{Kind: "EC2NodeClass", Name: `we"ird`}, `EC2NodeClass "we\"ird"`},
	} {
		if got := tc.ref.String(); got != tc.want {
			t.Errorf("%+v.String() = %s, want %s", tc.ref, got, tc.want)
		}
	}
}

func TestGroupVersion(t *testing.T) {
	for _, tc := range []struct{ apiVersion, group, version string }{
		{"v1", "", ""},
		{"apps/v1", "apps", "v1"},
		{"karpenter.sh/v1beta1", "karpenter.sh", "v1beta1"},
		{"karpenter.k8s.aws/v1", "karpenter.k8s.aws", "v1"},
		{"", "", ""},
	} {
		o := &Object{APIVersion: tc.apiVersion}
		if o.Group() != tc.group || o.Version() != tc.version {
			t.Errorf("%q: group %q version %q, want %q %q", tc.apiVersion, o.Group(), o.Version(), tc.group, tc.version)
		}
	}
	for v, want := range map[string]bool{
		"karpenter.sh/v1": true, "karpenter.k8s.aws/v1beta1": true, "karpenter.sh": true,
		"v1": false, "apps/v1": false, "karpenter.example.com/v1": false, "Karpenter.sh/v1": false,
	} {
		if IsKarpenterGroup(v) != want {
			t.Errorf("IsKarpenterGroup(%q) = %v", v, !want)
		}
	}
}

func TestLookup(t *testing.T) {
	doc := parse(t, `a:
  b:
  - x
  - {c: &v deep}
  alias: *v
  list: &l [1, 2]
  again: *l
  "dotted.key": y
n: null
e:
`)
	for _, tc := range []struct {
		name string
		path []any
		want string // value, or "<nil>"
		line int
	}{
		{"mapping keys", []any{"a", "dotted.key"}, "y", 8},
		{"sequence index", []any{"a", "b", 0}, "x", 3},
		{"into flow mapping", []any{"a", "b", 1, "c"}, "deep", 4},
		{"alias resolved", []any{"a", "alias"}, "deep", 4},
		{"through an alias", []any{"a", "again", 1}, "2", 6},
		{"index out of range", []any{"a", "b", 2}, "<nil>", 0},
		{"negative index", []any{"a", "b", -1}, "<nil>", 0},
		{"index into a mapping", []any{"a", 0}, "<nil>", 0},
		{"key into a sequence", []any{"a", "b", "c"}, "<nil>", 0},
		{"missing key", []any{"a", "zzz"}, "<nil>", 0},
		{"past a scalar", []any{"a", "b", 0, "x"}, "<nil>", 0},
		{"unsupported element", []any{"a", 1.5}, "<nil>", 0},
		{"explicit null", []any{"n"}, "null", 9},
		{"empty value", []any{"e"}, "", 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := Lookup(doc, tc.path...)
			got := "<nil>"
			if n != nil {
				got = n.Value
			}
			if got != tc.want {
				t.Fatalf("Lookup(%v) = %q, want %q", tc.path, got, tc.want)
			}
			if n != nil && n.Line != tc.line {
				t.Errorf("line %d, want %d", n.Line, tc.line)
			}
		})
	}
	if n := Lookup(doc); n == nil || n.Kind != yaml.MappingNode {
		t.Errorf("Lookup() without path = %+v, want the root mapping", n)
	}
	if Lookup(nil, "a") != nil {
		t.Error("Lookup(nil) is not nil")
	}
}

func TestMapEntry(t *testing.T) {
	doc := parse(t, "kind: Pod\nref: &r {a: 1}\nalias: *r\n")
	k, v := MapEntry(doc, "kind")
	if k == nil || k.Value != "kind" || v.Value != "Pod" || k.Line != 1 {
		t.Errorf("MapEntry(kind) = %+v, %+v", k, v)
	}
	if _, v := MapEntry(doc, "alias"); v == nil || v.Kind != yaml.MappingNode {
		t.Errorf("alias value not resolved: %+v", v)
	}
	if k, v := MapEntry(doc, "missing"); k != nil || v != nil {
		t.Error("missing key found")
	}
	if k, v := MapEntry(Lookup(doc, "kind"), "x"); k != nil || v != nil {
		t.Error("MapEntry on a scalar found a key")
	}
	if k, v := MapEntry(nil, "x"); k != nil || v != nil {
		t.Error("MapEntry(nil) found a key")
	}
}

func TestIsNull(t *testing.T) {
	doc := parse(t, "x: &x null\na: null\nb: ~\nc:\nd: 0\ne: ''\nf: 'null'\ng: *x\n")
	for key, want := range map[string]bool{"a": true, "b": true, "c": true, "d": false, "e": false, "f": false, "g": true, "missing": true} {
		if got := IsNull(Lookup(doc, key)); got != want {
			t.Errorf("IsNull(%s) = %v, want %v", key, got, want)
		}
	}
	if !IsNull(nil) {
		t.Error("IsNull(nil) = false")
	}
}

func TestPath(t *testing.T) {
	for _, tc := range []struct {
		elems []any
		want  string
	}{
		{nil, ""},
		{[]any{"spec"}, "spec"},
		{[]any{"spec", "amiSelectorTerms", 1, "owner"}, "spec.amiSelectorTerms[1].owner"},
		{[]any{"metadata", "annotations", "karpenter.sh/do-not-disrupt"}, "metadata.annotations.'karpenter.sh/do-not-disrupt'"},
		{[]any{0, "a"}, "[0].a"},
		{[]any{"a", 1.5, "b"}, "a.b"},
	} {
		if got := Path(tc.elems...); got != tc.want {
			t.Errorf("Path(%v) = %q, want %q", tc.elems, got, tc.want)
		}
	}
}

func TestLineOf(t *testing.T) {
	o := &Object{LineOffset: 10}
	if o.LineOf(nil) != 0 || o.LineOf(&yaml.Node{}) != 0 || o.LineOf(&yaml.Node{Line: 3}) != 13 {
		t.Errorf("LineOf: nil %d, no line %d, line 3 %d", o.LineOf(nil), o.LineOf(&yaml.Node{}), o.LineOf(&yaml.Node{Line: 3}))
	}
}

func TestShiftLines(t *testing.T) {
	err := &yaml.TypeError{Errors: []string{
		"line 2: cannot unmarshal !!str `abc` into []objects.AMISelectorTerm",
		"line 5: cannot unmarshal !!seq into string",
		"line 7: cannot unmarshal !!map into bool",
		"line 8: cannot unmarshal !!float `1.5` into int64",
		`line 9: mapping key "a" already defined at line 4`,
	}}
	want := "line 12: expected a list, found the string `abc`; line 15: expected a string, found a list; " +
		"line 17: expected true or false, found a mapping; line 18: expected a number, found the number `1.5`; " +
		`line 19: mapping key "a" already defined at line 14`
	if got := shiftLines(err, 10); got != want {
		t.Errorf("shiftLines =\n%s\nwant\n%s", got, want)
	}
	if got := shiftLines(errors.New("yaml: line 3: did not find expected key"), 4); got != "line 7: did not find expected key" {
		t.Errorf("got %q", got)
	}
}

func TestExpectation(t *testing.T) {
	for goType, want := range map[string]string{
		"[]objects.SelectorTerm": "a list", "[]string": "a list", "map[string]string": "a mapping", "map[string]interface {}": "a mapping",
		"objects.MetadataOptions": "a mapping", "string": "a string", "bool": "true or false", "int64": "a number", "int32": "a number",
		"int": "a number", "float64": "a number", "time.Duration": "time.Duration",
	} {
		if got := expectation(goType); got != want {
			t.Errorf("expectation(%q) = %q, want %q", goType, got, want)
		}
	}
}

// TestParsePath: ParsePath undoes Path, for the paths findings carry.
func TestParsePath(t *testing.T) {
	for _, elems := range [][]any{
		{"spec", "amiSelectorTerms", 1, "owner"},
		{"metadata", "annotations", "karpenter.sh/do-not-evict"},
		{"spec", "template", "metadata", "annotations", "compatibility.karpenter.k8s.aws/v1beta1-ubuntu"},
		{"spec", "blockDeviceMappings", 0, "ebs", "encrypted"},
		{"data", "mapRoles"},
		{"spec"},
		{},
	} {
		got := ParsePath(Path(elems...))
		if fmt.Sprint(got) != fmt.Sprint(elems) || len(got) != len(elems) {
			t.Errorf("ParsePath(%q) = %#v, want %#v", Path(elems...), got, elems)
		}
	}
	if got := ParsePath("spec.terms[x].a"); fmt.Sprint(got) != "[spec terms]" {
		t.Errorf("a malformed index: %#v", got)
	}
}
