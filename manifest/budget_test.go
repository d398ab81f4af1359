package manifest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Documents over the YAML budget, shared with the fuzz seeds. Each is a whole EC2NodeClass whose
// problem is on line 10 (the line of the alias at fault).
const (
	nodeClassHead = "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: nc\nspec:\n" +
		"  role: r\n  amiSelectorTerms: [{alias: al2023@latest}]\n  subnetSelectorTerms: [{tags: {a: b}}]\n" +
		"  securityGroupSelectorTerms: [{tags: {a: b}}]\n"
	selfMerge     = nodeClassHead + "  tags: &b {<<: *b}\n"
	selfValue     = nodeClassHead + "  tags: &b {a: *b}\n"
	selfList      = nodeClassHead + "  subnetSelectorTerms: &s [{tags: {a: b}}, *s]\n"
	mutualAnchors = nodeClassHead + "  tags: &a {b: &b [*a]}\n"
)

// laughsNodeClass is an EC2NodeClass whose tags hold levels levels of nine aliases ("billion laughs").
func laughsNodeClass(levels int) string {
	var b strings.Builder
	b.WriteString(nodeClassHead + "  tags:\n    a0: &a0 lol\n")
	for i := 1; i <= levels; i++ {
		fmt.Fprintf(&b, "    a%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d,", i-1), 9), ","))
	}
	return b.String()
}

// TestYAMLBudget: a document whose aliases expand past the budget, refer to themselves or nest too
// deep is an input error at the alias's line, and the other documents of the file are still read.
func TestYAMLBudget(t *testing.T) {
	deepAlias := nodeClassHead + "  tags:\n    a: &a " + strings.Repeat("[", 6000) + "x" + strings.Repeat("]", 6000) +
		"\n    b: " + strings.Repeat("{c: ", 4001) + "*a" + strings.Repeat("}", 4001) + "\n"
	for _, tc := range []struct {
		name, doc string
		line      int
		msg       string
	}{
		{"billion laughs", laughsNodeClass(9), 15, "YAML aliases expand this document to 980,658,"},
		{"merge key inside its own anchor", selfMerge, 10, "alias *b is inside the value of its own anchor &b (line 10), so that value never ends"},
		{"value inside its own anchor", selfValue, 10, "alias *b is inside the value of its own anchor &b"},
		{"list item inside its own anchor", selfList, 10, "alias *s is inside the value of its own anchor &s"},
		{"mutual references", mutualAnchors, 10, "alias *a is inside the value of its own anchor &a"},
		{"aliases nest too deep", deepAlias, 12, "alias *a nests the document more than 10000 levels deep"},
		{"100,000 nested lists", nodeClassHead + "  tags: " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "\n", 10, "invalid YAML: exceeded max depth of 10000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := join(tc.doc, nodePool)
			objs, errs := parseString(t, "in.yaml", in)
			if len(errs) != 1 || errs[0].File != "in.yaml" || errs[0].Line != tc.line || !strings.Contains(errs[0].Message, tc.msg) {
				t.Fatalf("errors %v\nwant one at in.yaml:%d: …%s…", errs, tc.line, tc.msg)
			}
			if len(objs) != 1 || objs[0].Kind != "NodePool" {
				t.Errorf("objects %v, want the NodePool of the next document", refs(objs))
			}
			for _, o := range objs {
				if _, err := o.Content(); err != nil {
					t.Errorf("%s: %v", o.Ref(), err)
				}
			}
		})
	}
}

// TestYAMLBudgetAnchorsUsedNormally: anchors that repeat a few values read as before, with their
// values expanded.
func TestYAMLBudgetAnchorsUsedNormally(t *testing.T) {
	doc := "apiVersion: v1\nkind: List\nitems:\n- " + strings.ReplaceAll(nodeClassHead, "\n", "\n  ") + "tags: &t {team: a, env: prod}\n" +
		"- apiVersion: karpenter.k8s.aws/v1\n  kind: EC2NodeClass\n  metadata: {name: other}\n  spec:\n    role: r\n    tags:\n      <<: *t\n      extra: x\n"
	objs, errs := parseString(t, "in.yaml", doc)
	if len(errs) != 0 || len(objs) != 2 {
		t.Fatalf("objects %v, errors %v", refs(objs), errs)
	}
	content, err := objs[1].Content()
	if err != nil {
		t.Fatal(err)
	}
	if tags, _ := content["spec"].(map[string]any)["tags"].(map[string]any); tags["team"] != "a" || tags["env"] != "prod" || tags["extra"] != "x" {
		t.Errorf("content tags %v", tags)
	}
}

// TestYAMLBudgetAcrossFiles: the budget holds for everything one reader reads, so that many files each
// just under the limit for one document are refused once their copies add up.
func TestYAMLBudgetAcrossFiles(t *testing.T) {
	dir := t.TempDir()
	// 200 nodes written out, copied 100 times: 98.5% copies, under the 99% a document may hold.
	doc := fmt.Sprintf(nodeClassHead+"  tags:\n    a: &a [%s]\n    b: [%s]\n", strings.Repeat("x,", 180), strings.Repeat("*a,", 100))
	for i := range 40 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.yaml", i)), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, errs := parseString(t, "one.yaml", doc); len(errs) != 0 {
		t.Fatalf("one file alone: %v", errs)
	}
	set := Reader{}.Read(context.Background(), []string{dir})
	if len(set.Errors) == 0 {
		t.Fatalf("40 files of 18,000 copies each were read whole (%d objects)", len(set.Objects))
	}
	e := set.Errors[0]
	if e.Line != 12 || !strings.Contains(e.Message, "YAML aliases expand the input read so far to") {
		t.Errorf("first error %v", e)
	}
	if len(set.Objects) < 15 {
		t.Errorf("only %d files read before the budget ran out", len(set.Objects))
	}
}

// TestKustomizeYAMLBudget: kustomize expands the aliases of the files it reads without bound, so a
// resource, patch or kustomization over the budget fails the build with its file and line before
// kustomize expands it.
func TestKustomizeYAMLBudget(t *testing.T) {
	for _, tc := range []struct {
		name, file, doc, kustomization string
		line                           int
		msg                            string
	}{
		{"billion laughs in a resource", "bomb.yaml", laughsNodeClass(9), "resources: [bomb.yaml]\n", 15, "YAML aliases expand this document to 980,658,"},
		{"merge key inside its own anchor", "self.yaml", selfMerge, "resources: [self.yaml]\n", 10, "alias *b is inside the value of its own anchor &b"},
		{"a patch inside its own anchor", "patch.yaml", "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: nc}\nspec: &s {tags: {a: *s}}\n",
			"resources: [nc.yaml]\npatches: [{path: patch.yaml}]\n", 4, "alias *s is inside the value of its own anchor &s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, text := range map[string]string{tc.file: tc.doc, "nc.yaml": nodeClass, "kustomization.yaml": tc.kustomization} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			set := &Set{}
			err := Reader{}.AddKustomization(context.Background(), set, dir)
			var ke *KustomizeError
			want := fmt.Sprintf("%s:%d: %s", filepath.Join(dir, tc.file), tc.line, tc.msg)
			if !errors.As(err, &ke) || !strings.Contains(err.Error(), want) {
				t.Errorf("got %v, want a kustomize error with …%s…", err, want)
			}
		})
	}
}
