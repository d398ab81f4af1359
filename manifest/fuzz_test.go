package manifest

import (
	"bytes"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"github.com/karpenter-guard/karpenter-guard/objects"
)

// FuzzParse reads arbitrary bytes as a YAML and as a JSON file. Parse must never panic or hang, every
// error must name the file and a line of it, and every object must carry its file and lines inside it
// and convert to the JSON the rules read; the column of a plain scalar must point at its text, so that
// the fixer edits the right bytes.
func FuzzParse(f *testing.F) {
	f.Add([]byte(join(nodePool, nodeClass, awsAuth)))
	f.Add([]byte(join(nodePool, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n bad: 1\n", nodeClass)))
	f.Add([]byte("apiVersion: v1\nkind: Pod\n\x00\x01\x02\xff"))
	f.Add([]byte("{\n\t\"apiVersion\": \"v1\",\n\t\"kind\": \"List\",\n\t\"items\": [{\"apiVersion\": \"karpenter.sh/v1\", \"kind\": \"NodePool\", \"metadata\": {\"name\": \"a\"}}]\n}\n"))
	f.Add([]byte("%YAML 1.1\n---\n" + nodePool + "...\n--- # c\r\n" + strings.ReplaceAll(nodeClass, "\n", "\r\n")))
	f.Add([]byte("&l {apiVersion: v1, kind: List, items: [*l, {apiVersion: karpenter.sh/v1beta1, kind: Provisioner}]}\n"))
	f.Add([]byte("\uFEFFapiVersion: v1\rkind: ConfigMap\u2028metadata: {name: aws-auth}\n"))
	// Over the YAML budget: aliases that expand to billions of nodes, or inside their own anchor.
	for _, doc := range []string{laughsNodeClass(9), selfMerge, selfValue, selfList, mutualAnchors} {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, file := range []string{"fuzz.yaml", "fuzz.json"} {
			checkParse(t, file, data)
		}
	})
}

func checkParse(t *testing.T, file string, data []byte) {
	t.Helper()
	lines := bytes.Count(data, []byte("\n"))
	if len(data) > 0 && data[len(data)-1] != '\n' {
		lines++
	}
	objs, _, errs := Parse(file, data)
	for _, e := range errs {
		if e.File != file || e.Line < 1 || e.Line > max(lines, 1) || e.Message == "" {
			t.Fatalf("%s (%d lines): bad error %+v", file, lines, e)
		}
	}
	text := strings.Split(string(data), "\n")
	for _, o := range objs {
		ref := o.Ref()
		if o.File != file || ref.File != file || ref.Line < 1 || ref.Line > lines || ref.Kind == "" || ref.APIVersion == "" {
			t.Fatalf("%s (%d lines): bad object %+v", file, lines, ref)
		}
		if o.DocRoot == nil || o.DocEndLine < ref.Line || o.DocEndLine > lines {
			t.Fatalf("%s (%d lines): %s ends on line %d", file, lines, ref, o.DocEndLine)
		}
		views := 0
		for _, set := range []bool{o.NodeClass != nil, o.NodePool != nil, o.AWSAuth != nil} {
			if set {
				views++
			}
		}
		if views != 1 {
			t.Fatalf("%s: %s has %d views", file, ref, views)
		}
		checkNodes(t, o, o.Root, text, map[*yaml.Node]bool{})
		_, _ = o.Content() // may fail (a key JSON cannot hold), but must end
	}
}

// checkNodes checks that every node of an object is on a line of the file and that a one-word plain
// scalar is found at its line and column.
func checkNodes(t *testing.T, o *objects.Object, n *yaml.Node, fileLines []string, seen map[*yaml.Node]bool) {
	t.Helper()
	if seen[n] {
		return
	}
	seen[n] = true
	line := o.LineOf(n)
	if line < 1 || line > len(fileLines) {
		t.Fatalf("%s: node %q on line %d of %d", o.Ref(), n.Value, line, len(fileLines))
	}
	if n.Kind == yaml.ScalarNode && n.Style == 0 && n.Anchor == "" && n.Value != "" && !strings.ContainsAny(n.Value, " \t\r\n\u0085\u2028\u2029\uFEFF") {
		text := []rune(fileLines[line-1])
		if n.Column < 1 || n.Column > len(text) {
			t.Fatalf("%s: %q at line %d column %d: %q", o.Ref(), n.Value, line, n.Column, string(text))
		}
		// A tagged node starts at its tag ("! value", "!!str value").
		if at := string(text[n.Column-1:]); !strings.HasPrefix(at, n.Value) && !strings.HasPrefix(at, "!") {
			t.Fatalf("%s: %q not at line %d column %d: %q", o.Ref(), n.Value, line, n.Column, string(text))
		}
	}
	for _, c := range n.Content {
		checkNodes(t, o, c, fileLines, seen)
	}
}
