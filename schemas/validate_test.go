package schemas_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	yaml "go.yaml.in/yaml/v3"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/validators/rules"
)

// compile compiles a schema of this directory with a JSON Schema validator of its own
// (santhosh-tekuri/jsonschema), as an editor or a pipeline would.
func compile(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(name, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(name)
	if err != nil {
		t.Fatalf("%s does not compile: %v", name, err)
	}
	return s
}

// jsonValue converts a YAML node to the value a YAML 1.2 reader such as yaml-language-server sees:
// timestamps stay strings, as JSON has no other type for them.
func jsonValue(n *yaml.Node) (any, error) {
	switch n.Kind {
	case yaml.DocumentNode:
		return jsonValue(n.Content[0])
	case yaml.AliasNode:
		return jsonValue(n.Alias)
	case yaml.MappingNode:
		m := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			v, err := jsonValue(n.Content[i+1])
			if err != nil {
				return nil, err
			}
			m[n.Content[i].Value] = v
		}
		return m, nil
	case yaml.SequenceNode:
		l := []any{}
		for _, c := range n.Content {
			v, err := jsonValue(c)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
		}
		return l, nil
	}
	if n.ShortTag() == "!!timestamp" {
		return n.Value, nil
	}
	var v any
	err := n.Decode(&v)
	return v, err
}

// validate validates a YAML document against a schema; nil when it is valid.
func validate(t *testing.T, s *jsonschema.Schema, doc *yaml.Node) error {
	t.Helper()
	v, err := jsonValue(doc)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return s.Validate(inst)
}

// document is one YAML document of a file in the repository.
type document struct {
	where string // file, and the document's line
	node  *yaml.Node
}

// documentsOfKind returns every document of kind in the YAML files under the directories given (from
// the repository root), in examples/ and in every testdata directory: multi-document files
// included, and a ConfigMap's data key holding such a document (the GuardConfig of manifests/base).
func documentsOfKind(t *testing.T, kind string, roots ...string) []document {
	t.Helper()
	var out []document
	seen := map[string]bool{}
	walk := func(root string) {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == ".git" || d.Name() == "tools") {
				return filepath.SkipDir
			}
			ext := filepath.Ext(path)
			if d.IsDir() || (ext != ".yaml" && ext != ".yml") || seen[path] {
				return nil
			}
			seen[path] = true
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			out = append(out, documentsIn(path, data, kind)...)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range roots {
		walk(r)
	}
	_ = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && (d.Name() == ".git" || d.Name() == "tools") {
			return filepath.SkipDir
		}
		if err == nil && d.IsDir() && d.Name() == "testdata" {
			walk(path)
			return filepath.SkipDir
		}
		return nil
	})
	return out
}

// documentsIn returns the documents of kind in a file's data, looking into a ConfigMap's data too.
func documentsIn(path string, data []byte, kind string) []document {
	var out []document
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); err != nil {
			// The end, or not YAML (a Helm template): nothing more of the kind.
			return out
		}
		if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
			continue
		}
		var head struct {
			Kind string            `yaml:"kind"`
			Data map[string]string `yaml:"data"`
		}
		_ = doc.Content[0].Decode(&head)
		switch {
		case head.Kind == kind:
			out = append(out, document{where: path + ":" + strconv.Itoa(doc.Content[0].Line), node: doc.Content[0]})
		case head.Kind == "ConfigMap":
			for key, v := range head.Data {
				if strings.HasSuffix(key, ".yaml") && strings.Contains(v, "kind: "+kind) {
					out = append(out, documentsIn(path+" data."+key, []byte(v), kind)...)
				}
			}
		}
	}
}

// encode writes a node back as YAML, for the Go decoders.
func encode(t *testing.T, n *yaml.Node) []byte {
	t.Helper()
	b, err := yaml.Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// parse parses a YAML text into its document's root node.
func parse(t *testing.T, text string) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Content[0]
}

// TestGuardConfigSchema: every GuardConfig of the repository that karpenter-guard accepts validates
// against schemas/guardconfig.schema.json, and one it refuses for an unknown key or a wrong type does
// not; so do GuardConfigs with an unknown key, a wrong type, an unknown rule ID or a bad value.
func TestGuardConfigSchema(t *testing.T) {
	s := compile(t, "guardconfig.schema.json")
	t.Chdir("..")
	ids := rules.Default().IDs()
	docs := documentsOfKind(t, config.Kind, "examples", "config", "manifests")
	accepted := 0
	for _, d := range docs {
		_, goErr := config.Parse(encode(t, d.node), ids)
		err := validate(t, s, d.node)
		switch {
		case goErr == nil && err != nil:
			t.Errorf("%s: karpenter-guard accepts it, the schema does not: %v", d.where, err)
		case goErr == nil:
			accepted++
		case structural(goErr.Error()) && err == nil:
			t.Errorf("%s: karpenter-guard refuses it (%v), the schema accepts it", d.where, goErr)
		default:
			t.Logf("%s: refused by karpenter-guard (%v); by the schema: %v", d.where, goErr, err != nil)
		}
	}
	if accepted < 2 {
		t.Errorf("%d GuardConfigs accepted of %d found: want config/testdata/guard.yaml and manifests/base/config.yaml at least", accepted, len(docs))
	}

	const head = "apiVersion: karpenter-guard.io/v1alpha1\nkind: GuardConfig\n"
	for _, tc := range []struct{ name, body string }{
		{"an unknown key", "retries: 3\n"},
		{"an unknown key below", "aws:\n  retries: 3\n"},
		{"a duration as a number", "aws:\n  timeout: 2\n"},
		{"a list for rules", "rules: [subnet-public]\n"},
		{"an unknown rule", "rules:\n  subnet-publik: off\n"},
		{"an unknown action", "rules:\n  subnet-public: block\n"},
		{"an unknown mode", "mode: strict\n"},
		{"a string for a number", "subnets:\n  minFreeIPs: many\n"},
		{"an owner that is no account", "amiOwners:\n  allowed: [amazn]\n"},
		{"no kind", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := head + tc.body
			if tc.name == "no kind" {
				text = "apiVersion: karpenter-guard.io/v1alpha1\n"
			}
			if _, err := config.Parse([]byte(text), ids); err == nil {
				t.Fatalf("karpenter-guard accepts %q: not a wrong GuardConfig", text)
			}
			if err := validate(t, s, parse(t, text)); err == nil {
				t.Errorf("the schema accepts %q", text)
			}
		})
	}
}

// structural reports whether a decoder's error is one the schema must also find: an unknown key or a
// value of the wrong type (not a check only code can make, such as an ARN naming its role).
func structural(msg string) bool {
	for _, s := range []string{"is not a GuardConfig key", "is not a key of", "cannot unmarshal", "unknown field", "expected a mapping", "expected a list"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// TestClusterFactsSchema: every ClusterFacts snapshot under examples/ and in the testdata directories
// that karpenter-guard accepts validates against schemas/clusterfacts.schema.json; snapshots with an
// unknown field, a wrong type or a bad value do not.
func TestClusterFactsSchema(t *testing.T) {
	s := compile(t, "clusterfacts.schema.json")
	t.Chdir("..")
	docs := documentsOfKind(t, facts.SnapshotKind, "examples")
	accepted := 0
	for _, d := range docs {
		_, goErr := facts.DecodeSnapshot(d.node, 0)
		err := validate(t, s, d.node)
		switch {
		case goErr == nil && err != nil:
			t.Errorf("%s: karpenter-guard accepts it, the schema does not: %v", d.where, err)
		case goErr == nil:
			accepted++
		default:
			t.Logf("%s: refused by karpenter-guard: %v", d.where, goErr)
		}
	}
	t.Logf("%d snapshots of %d accepted and valid", accepted, len(docs))
	examples, _ := filepath.Glob("examples/clusters/*/cluster-facts.yaml")
	if accepted < len(examples)+2 {
		t.Errorf("%d snapshots accepted of %d found: want every example's and the testdata's", accepted, len(docs))
	}

	const head = "apiVersion: karpenter-guard.io/v1alpha1\nkind: ClusterFacts\n"
	for _, tc := range []struct{ name, body string }{
		{"an unknown section", "nodes: []\n"},
		{"an unknown field of a role", "roles:\n  - name: r\n    arn: arn:aws:iam::111122223333:role/r\n    policy: x\n"},
		{"a section of the wrong type", "roles:\n  name: r\n"},
		{"a number for a string", "cluster:\n  name: prod\n  version: 1.33\n"},
		{"a string for a bool", "subnets:\n  - id: subnet-1\n    public: maybe\n"},
		{"an unknown authentication mode", "cluster:\n  authenticationMode: IAM\n"},
		{"an entry without its key", "images:\n  - name: x\n"},
		{"a null section", "roles:\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := parse(t, head+tc.body)
			if _, err := facts.DecodeSnapshot(n, 0); err == nil {
				t.Fatalf("karpenter-guard accepts %q: not a wrong snapshot", tc.body)
			}
			if err := validate(t, s, n); err == nil {
				t.Errorf("the schema accepts %q", tc.body)
			}
		})
	}
}

// modelineRE matches a yaml-language-server modeline that names one of these schemas at a release.
var modelineRE = regexp.MustCompile(`# yaml-language-server: \$schema=(\S+)`)

// TestModelines: every yaml-language-server modeline in the README and docs/ names a schema of this
// directory, at the release the GitHub Action installs, so that the URL a user copies serves a schema.
func TestModelines(t *testing.T) {
	t.Chdir("..")
	action, err := os.ReadFile("action.yml")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^    default: (v[0-9]+\.[0-9]+\.[0-9]+)$`).FindSubmatch(action)
	if m == nil {
		t.Fatal("action.yml has no default version")
	}
	prefix := "https://raw.githubusercontent.com/karpenter-guard/karpenter-guard/" + string(m[1]) + "/schemas/"
	docs, _ := filepath.Glob("docs/*.md")
	found := map[string]bool{}
	for _, doc := range append(docs, "README.md") {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, ml := range modelineRE.FindAllStringSubmatch(string(data), -1) {
			file, ok := strings.CutPrefix(ml[1], prefix)
			if !ok {
				t.Errorf("%s: modeline %s: want %s<file>", doc, ml[1], prefix)
				continue
			}
			if _, err := os.Stat(filepath.Join("schemas", file)); err != nil {
				t.Errorf("%s: modeline names %s, which schemas/ does not hold", doc, file)
			}
			found[file] = true
		}
	}
	for _, want := range []string{"guardconfig.schema.json", "clusterfacts.schema.json"} {
		if !found[want] {
			t.Errorf("no doc shows the modeline of %s", want)
		}
	}
}
