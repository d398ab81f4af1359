package objects_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/karpenter-guard/karpenter-guard/manifest"
	"github.com/karpenter-guard/karpenter-guard/objects"
)

// TestFromJSONMatchesTheYAMLParser: for every example object, the tree FromJSON builds holds the same
// values, and the same typed view, as the YAML parser's.
func TestFromJSONMatchesTheYAMLParser(t *testing.T) {
	dirs, _ := filepath.Glob("../examples/*")
	n := 0
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
			d, err := objects.FromJSON(j, "")
			if err != nil || d.Object == nil {
				t.Fatalf("%s: %v %+v", o.Ref(), err, d)
			}
			var want, got any
			if err := o.Root.Decode(&want); err != nil {
				t.Fatal(err)
			}
			if err := d.Object.Root.Decode(&got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(normalize(want), normalize(got)) {
				t.Errorf("%s: values differ:\n%v\n%v", o.Ref(), want, got)
			}
			if !reflect.DeepEqual(o.NodeClass, d.Object.NodeClass) || !reflect.DeepEqual(o.NodePool, d.Object.NodePool) || !reflect.DeepEqual(o.AWSAuth, d.Object.AWSAuth) {
				t.Errorf("%s: typed views differ", o.Ref())
			}
			n++
		}
	}
	if n < 15 {
		t.Errorf("only %d objects", n)
	}
}

// normalize makes YAML-decoded numbers comparable with JSON's (int and float64).
func normalize(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// FuzzFromJSON: any input gives an object, an ignored kind or an error, never a crash; valid JSON
// objects decode to the values encoding/json sees.
func FuzzFromJSON(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"karpenter.k8s.aws/v1","kind":"EC2NodeClass","metadata":{"name":"a"},"spec":{"role":"r","amiSelectorTerms":[{"alias":"al2023@latest"}]}}`))
	f.Add([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"aws-auth","namespace":"kube-system"},"data":{"mapRoles":"- rolearn: x"}}`))
	f.Add([]byte(`{"a":[1,2.5,true,null,{"b":"c"}]} x`))
	f.Add([]byte(`[[[[[[[[[[`))
	f.Add([]byte(`{"apiVersion":"karpenter.k8s.aws/v1","kind":"EC2NodeClass","metadata":{"name":"a"},"spec":{"userData":"echo \u003e\u0026 \"x\"\n\t\\ \/ \ud83d\ude00 \udc00 \u00e9"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := objects.FromJSON(data, "")
		if err != nil && strings.HasPrefix(err.Error(), "line 1: invalid JSON: ") && json.Valid(data) && !strings.Contains(err.Error(), "duplicate key") {
			t.Fatalf("FromJSON refused valid JSON %q: %v", data, err)
		}
		if err != nil || d.Object == nil {
			return
		}
		var want any
		if json.Unmarshal(data, &want) != nil {
			t.Fatalf("FromJSON accepted invalid JSON %q", data)
		}
		var got any
		if err := d.Object.Root.Decode(&got); err != nil {
			t.Fatalf("decode: %v", err)
		}
		if !reflect.DeepEqual(normalize(want), normalize(got)) {
			t.Fatalf("values differ for %q:\n%v\n%v", data, want, got)
		}
	})
}

// TestFromJSONMemoryFollowsNodes: the first chunk of nodes is sized from the ':' and '[' of the text,
// which a string full of colons inflates; it is capped, so such an object costs memory in proportion
// to its size, not 300 times it.
func TestFromJSONMemoryFollowsNodes(t *testing.T) {
	data := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","annotations":{"a":"` + strings.Repeat(":", 1<<20) + `"}}}`)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if _, err := objects.FromJSON(data, ""); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 8*uint64(len(data)) {
		t.Fatalf("decoding %d bytes allocated %d bytes", len(data), got)
	}
}

// TestFromJSONNamesTheField: in JSON every node is on line 1, so a wrong type is reported with the
// field's path instead ("spec.role: expected a string, found a list"), the way an admission
// denial should read.
func TestFromJSONNamesTheField(t *testing.T) {
	for in, want := range map[string]string{
		`{"apiVersion":"karpenter.k8s.aws/v1","kind":"EC2NodeClass","metadata":{"name":"x"},"spec":{"role":["a"]}}`:                                                `EC2NodeClass "x": spec.role: expected a string, found a list`,
		`{"apiVersion":"karpenter.k8s.aws/v1","kind":"EC2NodeClass","metadata":{"name":"x"},"spec":{"amiSelectorTerms":[{"alias":"al2023@latest"},{"tags":"x"}]}}`: `EC2NodeClass "x": spec.amiSelectorTerms[1].tags: expected a mapping, found the string ` + "`x`",
		`{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"p","labels":{"a":{}}}}`:                                                             `metadata.labels.a: expected a string, found a mapping`,
	} {
		_, err := objects.FromJSON([]byte(in), "")
		if err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("FromJSON(%s) = %v, want an error ending %q", in, err, want)
		}
	}
}

// TestArenaKeepsObjectsApart: objects read into one arena (an UPDATE's object and old object, the
// second larger than a chunk) come out as FromJSON reads them, the same again after Reset, and Reset
// empties the nodes handed out before, so a tree used after its review is over reads as empty
// rather than as another review's object.
func TestArenaKeepsObjectsApart(t *testing.T) {
	small := []byte(`{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"p"},"spec":{"template":{"spec":{"nodeClassRef":{"group":"karpenter.k8s.aws","kind":"EC2NodeClass","name":"c"}}}}}`)
	var labels []string
	for i := range 150 {
		labels = append(labels, fmt.Sprintf(`"l%d":"v%d"`, i, i))
	}
	large := []byte(`{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"q","labels":{` + strings.Join(labels, ",") + `}},"spec":{"template":{"spec":{"requirements":[{"key":"a","operator":"In","values":["x","y"]}]}}}}`)
	fresh := func(data []byte) *objects.Object {
		d, err := objects.FromJSON(data, "")
		if err != nil {
			t.Fatal(err)
		}
		return d.Object
	}
	var a objects.Arena
	for round := range 2 {
		var got []*objects.Object
		for _, data := range [][]byte{small, large} {
			d, err := objects.FromJSONIn(&a, data, "")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, d.Object)
		}
		for i, data := range [][]byte{small, large} {
			if want := fresh(data); !reflect.DeepEqual(got[i], want) {
				t.Fatalf("round %d: object %d read into the arena differs from FromJSON's", round, i)
			}
		}
		if n := a.Nodes(); n < 150 || n > 3*128 {
			t.Fatalf("round %d: the arena holds %d nodes after reading about 320", round, n)
		}
		a.Reset()
		if got[0].Root.Kind != 0 || got[1].Root.Content != nil {
			t.Fatalf("round %d: nodes handed out before Reset still hold kind %v and %d children", round, got[0].Root.Kind, len(got[1].Root.Content))
		}
	}
}
