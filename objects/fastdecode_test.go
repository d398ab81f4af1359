package objects

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// agreeWithYAML decodes root with the fast path and with yaml.v3 into each view and the head, and
// fails when the fast path answers something yaml.v3 does not. It returns how many of the four
// decodes (the head, then each view with its metadata, as Decode does) the fast path took.
func agreeWithYAML(t *testing.T, root *yaml.Node, src string) int {
	t.Helper()
	root = resolve(root)
	if root == nil {
		return 0
	}
	taken := 0
	type head struct {
		APIVersion any      `yaml:"apiVersion"`
		Kind       any      `yaml:"kind"`
		Metadata   Metadata `yaml:"metadata"`
	}
	var fastHead head
	if ok, _ := decodeHeadFast(root, &fastHead.APIVersion, &fastHead.Kind, &fastHead.Metadata); !ok {
		return taken // Decode then decodes the view with yaml.v3 too
	}
	taken++
	var slowHead head
	if err := root.Decode(&slowHead); err != nil || !reflect.DeepEqual(fastHead, slowHead) {
		t.Fatalf("head of %q: fast path gave %#v; yaml.v3 gave %#v, %v", src, fastHead, slowHead, err)
	}
	// The views, with the head's metadata as Decode gives it.
	for _, mk := range []func() any{
		func() any { return &EC2NodeClass{} }, func() any { return &NodePool{} }, func() any { return &ConfigMap{} },
	} {
		fast, slow := mk(), mk()
		if ok, _ := decodeViewFast(root, fast, &fastHead.Metadata); !ok {
			if !reflect.DeepEqual(fast, mk()) {
				t.Fatalf("%T of %q: the fast path declined but left %#v", fast, src, fast)
			}
			continue
		}
		taken++
		if err := root.Decode(slow); err != nil || !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%T of %q: fast path gave %#v; yaml.v3 gave %#v, %v", fast, src, fast, slow, err)
		}
	}
	return taken
}

// TestDecodeFastTakesEveryExample: the EC2NodeClasses and NodePools of the examples and the e2e manifests
// decode through the fast path (or it buys nothing) to what yaml.v3 decodes.
func TestDecodeFastTakesEveryExample(t *testing.T) {
	var files []string
	for _, dir := range []string{"../examples", "../e2e/testdata"} {
		_ = filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
			if err == nil && !e.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
				files = append(files, p)
			}
			return nil
		})
	}
	objects, taken := 0, 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(strings.NewReader(string(data)))
		for {
			var n yaml.Node
			if dec.Decode(&n) != nil {
				break
			}
			root := resolve(&n)
			if root == nil || root.Kind != yaml.MappingNode {
				continue
			}
			if _, v := MapEntry(root, "kind"); v == nil || (v.Value != KindEC2NodeClass && v.Value != KindNodePool) {
				continue
			}
			objects++
			if agreeWithYAML(t, root, f) >= 2 {
				taken++
			}
		}
	}
	t.Logf("%d of %d EC2NodeClasses and NodePools in %d files took the fast path", taken, objects, len(files))
	if objects < 15 || taken < objects {
		t.Fatalf("only %d of %d EC2NodeClasses and NodePools took the fast path: every one should", taken, objects)
	}
}

// TestDecodeFastAgreesWithYAMLOnGeneratedDocuments builds objects whose fields hold values of every
// node kind and tag (and repeated keys, aliases, merge keys, nulls) and checks that whenever the fast
// path answers, yaml.v3 decodes the same.
func TestDecodeFastAgreesWithYAMLOnGeneratedDocuments(t *testing.T) {
	values := []string{
		"x", `"x"`, "1", "0", "01", "-1", "1.5", "true", "True", "false", "null", "~", "", "[]", "[a, 1]", "{}", "{a: b}",
		"{a: 1}", "{a: null}", "{a: b, a: c}", "*a", "&a x", "!!str 1", "!!int 1", "99999999999", "2147483648", "[{a: b}]",
		"[{id: x, tags: {k: v}}]", "[{alias: al2023@latest, owner: amazon}]", "{encrypted: true, volumeSize: 20Gi}", "[x, null]",
		"{<<: {a: b}}", "[[x]]", "[a, null, b]", "[null, {key: k}]", "!!null x", "!!null {a: b}", "!!null ~", "!x {a: b}",
	}
	fields := []string{
		"metadata", "name", "namespace", "annotations", "labels", "spec", "amiFamily", "amiSelectorTerms", "subnetSelectorTerms",
		"role", "userData", "metadataOptions", "httpPutResponseHopLimit", "blockDeviceMappings", "rootVolume", "ebs", "encrypted",
		"associatePublicIPAddress", "kubelet", "template", "nodeClassRef", "requirements", "values", "minValues", "disruption",
		"limits", "weight", "data", "tags", "id", "alias", "key", "x",
	}
	rng := rand.New(rand.NewPCG(5, 6))
	var value func(depth int) string
	value = func(depth int) string {
		if depth < 3 && rng.IntN(3) == 0 {
			var b strings.Builder
			b.WriteString("{")
			for i := range 1 + rng.IntN(3) {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString(fields[rng.IntN(len(fields))] + ": " + value(depth+1))
			}
			b.WriteString("}")
			return b.String()
		}
		if depth < 3 && rng.IntN(6) == 0 {
			return "[" + value(depth+1) + "]"
		}
		return values[rng.IntN(len(values))]
	}
	taken := 0
	for range 50000 {
		var b strings.Builder
		b.WriteString("apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\n")
		for range 1 + rng.IntN(4) {
			b.WriteString(fields[rng.IntN(len(fields))] + ": " + value(0) + "\n")
		}
		src := b.String()
		var n yaml.Node
		if yaml.Unmarshal([]byte(src), &n) != nil {
			continue
		}
		taken += agreeWithYAML(t, &n, src)
	}
	t.Logf("the fast path answered %d decodes of 50000 generated documents", taken)
	if taken < 20000 {
		t.Fatalf("the fast path answered only %d decodes: the generator no longer exercises it", taken)
	}
}

// FuzzDecodeFast checks on arbitrary YAML and JSON that whenever the fast path answers, yaml.v3
// decodes the same.
func FuzzDecodeFast(f *testing.F) {
	f.Add("apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: a}\nspec: {role: r, amiSelectorTerms: [{alias: al2023@latest}]}\n")
	f.Add(`{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"p"},"spec":{"weight":10,"template":{"spec":{"requirements":[{"key":"k","operator":"In","values":["a"],"minValues":2}]}}}}`)
	f.Add("kind: ConfigMap\ndata: {mapRoles: x}\nmetadata: {name: aws-auth, annotations: {a: b, a: c}}\n")
	f.Fuzz(func(t *testing.T, src string) {
		if d, err := FromJSON([]byte(src), ""); err == nil && d.Object != nil {
			agreeWithYAML(t, d.Object.Root, src)
		}
		var n yaml.Node
		if yaml.Unmarshal([]byte(src), &n) == nil {
			agreeWithYAML(t, &n, src)
		}
	})
}

// TestDecodeFastDeclinesWhatYAMLTreatsSpecially pins cases a review found where yaml.v3 does not
// decode the obvious: it drops null elements of typed lists, and refuses `!!null` on a non-null
// value or a mapping. The fast path must decline them (or agree).
func TestDecodeFastDeclinesWhatYAMLTreatsSpecially(t *testing.T) {
	for name, src := range map[string]string{
		"null in a list of strings": "kind: NodePool\nspec:\n  template:\n    spec:\n      requirements:\n      - key: k\n        operator: In\n        values: [a, null, b]\n",
		"null in a list of structs": "kind: NodePool\nspec:\n  template:\n    spec:\n      requirements:\n      - null\n      - key: k\n",
		"!!null on a string":        "metadata:\n  name: n\n  namespace: !!null x\n",
		"!!null on a mapping":       "spec:\n  metadataOptions: !!null {httpTokens: required}\n",
		"!!null in kubelet":         "spec:\n  kubelet: {maxPods: !!null 3}\n",
		"null in kubelet":           "spec:\n  kubelet: {maxPods: null, a: ~, b: [null]}\n",
		"custom tag on a mapping":   "spec:\n  metadataOptions: !custom {httpTokens: required}\n",
		"merge key":                 "metadata:\n  name: n\n  annotations: {<<: {a: b}}\n",
		"quoted <<, a plain key":    "metadata:\n  name: n\n  annotations: {\"<<\": x}\n",
	} {
		t.Run(name, func(t *testing.T) {
			var n yaml.Node
			if err := yaml.Unmarshal([]byte(src), &n); err != nil {
				t.Fatal(err)
			}
			agreeWithYAML(t, &n, src)
		})
	}
}
