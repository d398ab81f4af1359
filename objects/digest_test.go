package objects

import (
	"reflect"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// decodeDoc decodes one YAML document as the CLI reads a manifest.
func decodeDoc(t *testing.T, doc string) *Object {
	t.Helper()
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &root); err != nil {
		t.Fatal(err)
	}
	d, err := Decode(&root, "x.yaml", 0)
	if err != nil || d.Object == nil {
		t.Fatalf("decode %q: %+v, %v", doc, d, err)
	}
	return d.Object
}

// TestContentOnce: a file's object converts its tree once and answers the same map after, equal to a
// fresh conversion; its digest is the digest of that content, computed once.
func TestContentOnce(t *testing.T) {
	o := decodeDoc(t, "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: a}\nspec: {weight: 5, template: {spec: {}}}\n")
	first, err := o.Content()
	if err != nil {
		t.Fatal(err)
	}
	second, _ := o.Content()
	if reflect.ValueOf(first).UnsafePointer() != reflect.ValueOf(second).UnsafePointer() {
		t.Error("Content converted the tree again")
	}
	fresh, err := o.convertContent()
	if err != nil || !reflect.DeepEqual(first, fresh) {
		t.Errorf("remembered content %v, a fresh conversion %v, %v", first, fresh, err)
	}
	d, err := o.ContentDigest()
	if err != nil {
		t.Fatal(err)
	}
	want, err := DigestContent(fresh)
	if err != nil || d != want {
		t.Errorf("ContentDigest() = %x, the content's digest %x, %v", d, want, err)
	}

	noTree := &Object{Kind: "NodePool", Name: "x"}
	if _, err := noTree.ContentDigest(); err == nil {
		t.Error("an object without fields has a digest")
	}
}

// TestContentDigest: the parts tell apart what differs and only that: key order and the source's
// form do not count; metadata counts only in its own part; absent metadata is not null metadata.
func TestContentDigest(t *testing.T) {
	digest := func(doc string) ContentDigest {
		t.Helper()
		d, err := decodeDoc(t, doc).ContentDigest()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	base := digest("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: a}\nspec: {weight: 5, limits: {cpu: 10}}\n")
	reordered := digest("kind: NodePool\nspec:\n  limits: {cpu: 10}\n  weight: 5\nmetadata:\n  name: a\napiVersion: karpenter.sh/v1\n")
	if reordered != base {
		t.Error("key order changed the digest")
	}
	fromJSON, err := FromJSON([]byte(`{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"a"},"spec":{"weight":5,"limits":{"cpu":10}}}`), "")
	if err != nil {
		t.Fatal(err)
	}
	if d, err := fromJSON.Object.ContentDigest(); err != nil || d != base {
		t.Errorf("the same object from JSON has digest %x, %v; from YAML %x", d, err, base)
	}
	renamed := digest("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: b}\nspec: {weight: 5, limits: {cpu: 10}}\n")
	if renamed.WithoutMetadata != base.WithoutMetadata || renamed.Metadata == base.Metadata {
		t.Errorf("another name: %x, want the same spec part as %x and another metadata part", renamed, base)
	}
	reweighted := digest("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: a}\nspec: {weight: 6, limits: {cpu: 10}}\n")
	if reweighted.WithoutMetadata == base.WithoutMetadata || reweighted.Metadata != base.Metadata {
		t.Errorf("another weight: %x, want another spec part than %x and the same metadata part", reweighted, base)
	}
	absent, err := DigestContent(map[string]any{"kind": "NodePool"})
	if err != nil {
		t.Fatal(err)
	}
	null, err := DigestContent(map[string]any{"kind": "NodePool", "metadata": nil})
	if err != nil {
		t.Fatal(err)
	}
	if absent.WithoutMetadata != null.WithoutMetadata || absent.Metadata == null.Metadata {
		t.Errorf("absent metadata %x, null metadata %x: want the same spec part and other metadata parts", absent, null)
	}
}
