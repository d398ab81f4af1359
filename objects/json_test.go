package objects_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/karpenter-guard/karpenter-guard/manifest"
	"github.com/karpenter-guard/karpenter-guard/objects"
)

// exampleObjects returns every object of the bundled examples as the CLI reads them, with its JSON.
func exampleObjects(t *testing.T) (objs []*objects.Object, raws [][]byte) {
	t.Helper()
	dirs, _ := filepath.Glob("../examples/*")
	for _, dir := range dirs {
		set := (&manifest.Reader{MaxFileSize: manifest.DefaultMaxFileSize}).Read(context.Background(), []string{dir})
		for _, o := range set.Objects {
			y, err := yaml.Marshal(o.Root)
			if err != nil {
				t.Fatal(err)
			}
			j, err := sigsyaml.YAMLToJSON(y)
			if err != nil {
				t.Fatal(err)
			}
			objs, raws = append(objs, o), append(raws, j)
		}
	}
	if len(objs) < 15 {
		t.Fatalf("only %d example objects", len(objs))
	}
	return objs, raws
}

// TestOneModelWhateverTheSource: every example object read from its YAML file, from its JSON (as the
// API server sends it for review) and from the cluster cache's unstructured values gives the same typed
// view and the same answers from Fields at every path; only lines differ (JSON has none).
func TestOneModelWhateverTheSource(t *testing.T) {
	objs, raws := exampleObjects(t)
	for i, o := range objs {
		fromJSON, err := objects.FromJSON(raws[i], "")
		if err != nil || fromJSON.Object == nil {
			t.Fatalf("%s: FromJSON: %v %+v", o.Ref(), err, fromJSON)
		}
		var m map[string]any
		if err := utiljson.Unmarshal(raws[i], &m); err != nil {
			t.Fatal(err)
		}
		fromCache, err := objects.FromUnstructured(m, "")
		if err != nil || fromCache.Object == nil {
			t.Fatalf("%s: FromUnstructured: %v", o.Ref(), err)
		}
		for _, got := range []*objects.Object{fromJSON.Object, fromCache.Object} {
			// Compared as JSON: YAML gives int where JSON gives int64 in untyped maps (kubelet).
			for _, pair := range [][2]any{{o.NodeClass, got.NodeClass}, {o.NodePool, got.NodePool}, {o.AWSAuth, got.AWSAuth}} {
				if !reflect.DeepEqual(normalize(pair[0]), normalize(pair[1])) {
					t.Errorf("%s: typed views differ:\n%v\n%v", o.Ref(), normalize(pair[0]), normalize(pair[1]))
				}
			}
			if got.Fields.Line() != 0 || got.Ref().Line != 0 {
				t.Errorf("%s: JSON claims line %d", o.Ref(), got.Fields.Line())
			}
			compareFields(t, o.Ref().String(), o.Fields, got.Fields, nil)
		}
		if o.Fields.Line() == 0 {
			t.Errorf("%s: the file's object has no line", o.Ref())
		}
	}
}

// compareFields walks want's fields below path and checks that got answers alike.
func compareFields(t *testing.T, name string, want, got objects.Fields, path []any) {
	t.Helper()
	if want.Has(path...) != got.Has(path...) || want.Len(path...) != got.Len(path...) {
		t.Fatalf("%s %s: Has %v/%v Len %d/%d", name, objects.Path(path...), want.Has(path...), got.Has(path...), want.Len(path...), got.Len(path...))
	}
	if !reflect.DeepEqual(normalize(want.Value(path...)), normalize(got.Value(path...))) {
		t.Fatalf("%s %s: values differ: %v / %v", name, objects.Path(path...), want.Value(path...), got.Value(path...))
	}
	var wantNode, gotNode any
	if n := want.Node(path...); n != nil {
		_ = n.Decode(&wantNode)
	}
	if n := got.Node(path...); n != nil {
		_ = n.Decode(&gotNode)
	}
	if !reflect.DeepEqual(normalize(wantNode), normalize(gotNode)) {
		t.Fatalf("%s %s: nodes differ: %v / %v", name, objects.Path(path...), wantNode, gotNode)
	}
	keys := append([]string(nil), want.Keys(path...)...)
	gotKeys := got.Keys(path...)
	sortStrings(keys)
	if len(keys) != len(gotKeys) || (len(keys) > 0 && !reflect.DeepEqual(keys, gotKeys)) {
		t.Fatalf("%s %s: keys %v / %v", name, objects.Path(path...), keys, gotKeys)
	}
	for _, k := range keys {
		compareFields(t, name, want, got, append(append([]any(nil), path...), k))
	}
	for i := range want.Len(path...) {
		compareFields(t, name, want, got, append(append([]any(nil), path...), i))
	}
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// normalize makes YAML-decoded numbers comparable with JSON's (int and float64).
func normalize(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// TestFromJSONNamesTheField: in JSON there are no lines, so a wrong type is reported with the field's
// path ("spec.role: expected a string, found a list"), the way an admission denial should read; the
// same for a JSON manifest the CLI reads (every node on line 1) and for an object of the cluster cache.
func TestFromJSONNamesTheField(t *testing.T) {
	for in, want := range map[string]string{
		`{"apiVersion":"karpenter.k8s.aws/v1","kind":"EC2NodeClass","metadata":{"name":"x"},"spec":{"role":["a"]}}`:                                                       `EC2NodeClass "x": spec.role: expected a string, found a list`,
		`{"apiVersion":"karpenter.k8s.aws/v1","kind":"EC2NodeClass","metadata":{"name":"x"},"spec":{"amiSelectorTerms":[{"alias":"al2023@latest"},{"tags":"x"}]}}`:        `EC2NodeClass "x": spec.amiSelectorTerms[1].tags: expected a mapping, found the string ` + "`x`",
		`{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"p","labels":{"a":{}}}}`:                                                                    `metadata.labels.a: expected a string, found a mapping`,
		`{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"p"},"spec":{"weight":1.5}}`:                                                                `NodePool "p": spec.weight: expected a number, found the number ` + "`1.5`",
		`{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"p"},"spec":{"template":{"spec":{"requirements":[{"key":"a"},{"key":"b","values":"x"}]}}}}`: `NodePool "p": spec.template.spec.requirements[1].values: expected a list, found the string ` + "`x`",
	} {
		_, err := objects.FromJSON([]byte(in), "")
		if err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("FromJSON(%s) = %v, want an error ending %q", in, err, want)
		}
		var m map[string]any
		if err := utiljson.Unmarshal([]byte(in), &m); err != nil {
			t.Fatal(err)
		}
		if _, err := objects.FromUnstructured(m, ""); err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("FromUnstructured(%s) = %v, want an error ending %q", in, err, want)
		}
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(in), &doc); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(in, "1.5") {
			continue // yaml.v3 truncates 1.5 into an integer field: the CLI reads it as 1
		}
		_, err = objects.Decode(&doc, "x.json", 0)
		if field, _, _ := strings.Cut(strings.TrimPrefix(want, `EC2NodeClass "x": `), ":"); err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(field, `NodePool "p": `)) {
			t.Errorf("Decode(%s as a JSON file) = %v, want the field named", in, err)
		}
	}
}

// FuzzFromJSON: any input gives an object, an ignored kind or an error, never a crash; an object's
// Fields hold the values encoding/json sees.
func FuzzFromJSON(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"karpenter.k8s.aws/v1","kind":"EC2NodeClass","metadata":{"name":"a"},"spec":{"role":"r","amiSelectorTerms":[{"alias":"al2023@latest"}]}}`))
	f.Add([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"aws-auth","namespace":"kube-system"},"data":{"mapRoles":"- rolearn: x"}}`))
	f.Add([]byte(`{"a":[1,2.5,true,null,{"b":"c"}]} x`))
	f.Add([]byte(`[[[[[[[[[[`))
	f.Add([]byte(`{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"p"},"spec":{"template":{"spec":{"requirements":[{"key":"a"},{"values":{"x":1}}]}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := objects.FromJSON(data, "")
		if err != nil || d.Object == nil {
			return
		}
		var want any
		if json.Unmarshal(data, &want) != nil {
			t.Fatalf("FromJSON accepted invalid JSON %q", data)
		}
		if got := d.Object.Fields.Value(); !reflect.DeepEqual(normalize(want), normalize(got)) {
			t.Fatalf("values differ for %q:\n%v\n%v", data, want, got)
		}
	})
}
