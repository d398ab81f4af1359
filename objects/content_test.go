package objects

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"github.com/karpenter-guard/karpenter-guard/internal/yamlbudget"
)

// contentSeeds are documents whose scalars YAML 1.1 and 1.2 read alike, and ones they do not.
var contentSeeds = []string{
	"a: 1\nb: 1.5\nc: true\nd: null\ne: text\nf: [1, two, {g: h}]\n",
	"detailedMonitoring: yes\n",
	"mode: 0755\n",
	"on: off\n",
	"x: 0x1F\ny: 0o17\nz: 1_000\n",
	"t: 2024-01-01\n",
	"big: 99999999999999999999\n",
	"inf: .inf\n",
	"time: 1:20\n",
	"base: &b {a: 1}\nderived:\n  <<: *b\n  c: 2\n",
	"quoted: 'yes'\nfolded: >\n  yes\n",
	"1: one\n",
	"tagged: !!str 12\n",
	"n: ~\nm: -3\nf: 1e3\n",
	// Aliases: a bomb and anchors inside their own values, which the reader refuses before converting.
	"a0: &a0 lol\na1: &a1 [*a0,*a0,*a0,*a0,*a0,*a0,*a0,*a0,*a0]\na2: &a2 [*a1,*a1,*a1,*a1,*a1,*a1,*a1,*a1,*a1]\n" +
		"a3: &a3 [*a2,*a2,*a2,*a2,*a2,*a2,*a2,*a2,*a2]\na4: &a4 [*a3,*a3,*a3,*a3,*a3,*a3,*a3,*a3,*a3]\n" +
		"a5: &a5 [*a4,*a4,*a4,*a4,*a4,*a4,*a4,*a4,*a4]\na6: &a6 [*a5,*a5,*a5,*a5,*a5,*a5,*a5,*a5,*a5]\n" +
		"a7: &a7 [*a6,*a6,*a6,*a6,*a6,*a6,*a6,*a6,*a6]\na8: &a8 [*a7,*a7,*a7,*a7,*a7,*a7,*a7,*a7,*a7]\n",
	"tags: &b {<<: *b}\n",
	"tags: &b {a: *b}\n",
	"subnets: &s [a, *s]\n",
	"a: &a {b: &b [*a]}\n",
}

// requireSameContent checks that where the quick conversion answers, it answers as kubectl would. Like
// the manifest reader, it converts only documents within the YAML budget.
func requireSameContent(t *testing.T, doc string) {
	t.Helper()
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &root); err != nil || len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return
	}
	if yamlbudget.Check(&root) != nil {
		return
	}
	n := root.Content[0]
	quick, ok := plainValue(n)
	if !ok {
		return
	}
	exact, err := kubectlValue(n)
	if err != nil {
		t.Fatalf("%q: the quick conversion answers %v, but kubectl's fails: %v", doc, quick, err)
	}
	if !reflect.DeepEqual(quick, exact) {
		t.Errorf("%q: quick conversion %#v, kubectl's %#v", doc, quick, exact)
	}
}

// TestContentAsKubectlReadsIt: Object.Content's quick path gives what kubectl sends, on the seeds,
// every example and every real-world manifest; on YAML 1.1-only scalars it defers to kubectl's way.
func TestContentAsKubectlReadsIt(t *testing.T) {
	for _, doc := range contentSeeds {
		requireSameContent(t, doc)
	}
	var root yaml.Node
	if err := yaml.Unmarshal([]byte("detailedMonitoring: yes\n"), &root); err != nil {
		t.Fatal(err)
	}
	if _, ok := plainValue(root.Content[0]); ok {
		t.Error("an unquoted yes took the quick path: YAML 1.1 reads it as true, 1.2 as a string")
	}
	files := 0
	for _, dir := range []string{"../examples", "../testdata/realworld"} {
		_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, doc := range strings.Split(string(data), "\n---") {
				requireSameContent(t, doc)
			}
			files++
			return nil
		})
	}
	if files < 20 {
		t.Errorf("only %d files compared", files)
	}
}

func FuzzContent(f *testing.F) {
	for _, s := range contentSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		requireSameContent(t, doc)
	})
}
