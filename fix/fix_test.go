package fix_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/fix"
	"github.com/karpenter-guard/karpenter-guard/manifest"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/rules"
)

func load(t testing.TB, name, text string) *manifest.Set {
	t.Helper()
	set := &manifest.Set{}
	set.Add(manifest.Source{Path: name, Data: []byte(text)})
	return set
}

// scripted returns an evaluator that proposes the edits made by mk for the first object, once: after
// they are applied the finding is gone, as a real rule's would be.
func scripted(mk func(o *objects.Object) []validators.Edit) fix.Evaluator {
	done := false
	return func(s *manifest.Set) validators.Result {
		if done || len(s.Objects) == 0 {
			return validators.Result{}
		}
		done = true
		o := s.Objects[0]
		return validators.Result{Findings: []validators.Finding{{
			Rule: "test", Object: o.Ref(), Line: o.Ref().Line, Fixable: true, Edits: mk(o),
		}}}
	}
}

func quoted(v string) *yaml.Node {
	n := validators.Scalar(v)
	n.Style = yaml.DoubleQuotedStyle
	return n
}

func TestEditsKeepEverythingElse(t *testing.T) {
	const in = `# leading comment
apiVersion: karpenter.sh/v1   # trailing comment
kind: NodePool
metadata:
    name: four-space-indent
    annotations:
        team: "data"   # quoted, commented
        karpenter.sh/do-not-evict: 'true'
spec:
    template:
        spec:
            nodeClassRef: {apiVersion: karpenter.k8s.aws/v1beta1, kind: EC2NodeClass, name: default}
            requirements:
            -   key: karpenter.sh/capacity-type
                operator: In
                values: ["on-demand"]


    disruption:
        consolidationPolicy: WhenUnderutilized # old name
        expireAfter: 720h
`
	for _, tc := range []struct {
		name  string
		edits func(o *objects.Object) []validators.Edit
		want  string
	}{
		{
			name: "set keeps the trailing comment",
			edits: func(o *objects.Object) []validators.Edit {
				return []validators.Edit{{Object: o, Path: []any{"spec", "disruption"}, Op: validators.EditSet, Key: "consolidationPolicy", Value: validators.Scalar("WhenEmptyOrUnderutilized")}}
			},
			want: strings.Replace(in, "WhenUnderutilized # old name", "WhenEmptyOrUnderutilized # old name", 1),
		},
		{
			name: "rename in single quotes keeps the style of the value",
			edits: func(o *objects.Object) []validators.Edit {
				return []validators.Edit{{Object: o, Path: []any{"metadata", "annotations"}, Op: validators.EditRename,
					Key: "karpenter.sh/do-not-evict", NewKey: "karpenter.sh/do-not-disrupt", Value: validators.Scalar("true")}}
			},
			want: strings.Replace(in, "karpenter.sh/do-not-evict: 'true'", "karpenter.sh/do-not-disrupt: 'true'", 1),
		},
		{
			name: "flow mapping is re-rendered on its line",
			edits: func(o *objects.Object) []validators.Edit {
				p := []any{"spec", "template", "spec", "nodeClassRef"}
				return []validators.Edit{{Object: o, Path: p, Op: validators.EditRename, Key: "apiVersion", NewKey: "group", Value: validators.Scalar("karpenter.k8s.aws")}}
			},
			want: strings.Replace(in, "{apiVersion: karpenter.k8s.aws/v1beta1, kind: EC2NodeClass, name: default}", "{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}", 1),
		},
		{
			name: "delete the last entry of a mapping, blank lines and the next key's indentation survive",
			edits: func(o *objects.Object) []validators.Edit {
				return []validators.Edit{{Object: o, Path: []any{"spec", "disruption"}, Op: validators.EditDelete, Key: "expireAfter"}}
			},
			want: strings.Replace(in, "        expireAfter: 720h\n", "", 1),
		},
		{
			name: "add at the four-space indentation after blank lines",
			edits: func(o *objects.Object) []validators.Edit {
				return []validators.Edit{{Object: o, Path: []any{"spec", "template", "spec"}, Op: validators.EditAdd, Key: "expireAfter", Value: validators.Scalar("720h")}}
			},
			want: strings.Replace(in, "                values: [\"on-demand\"]\n", "                values: [\"on-demand\"]\n            expireAfter: 720h\n", 1),
		},
		{
			name: "add a list to a sequence item mapping",
			edits: func(o *objects.Object) []validators.Edit {
				seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: []*yaml.Node{validators.Scalar("a"), quoted("b c")}}
				return []validators.Edit{{Object: o, Path: []any{"spec", "template", "spec", "requirements", 0}, Op: validators.EditAdd, Key: "extra", Value: seq}}
			},
			want: strings.Replace(in, "                values: [\"on-demand\"]\n", "                values: [\"on-demand\"]\n                extra:\n                  - a\n                  - \"b c\"\n", 1),
		},
		{
			name: "deleting the only other annotation keeps the mapping",
			edits: func(o *objects.Object) []validators.Edit {
				return []validators.Edit{{Object: o, Path: []any{"metadata", "annotations"}, Op: validators.EditDelete, Key: "team"}}
			},
			want: strings.Replace(in, "        team: \"data\"   # quoted, commented\n", "", 1),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := fix.Apply(load(t, "np.yaml", in), scripted(tc.edits))
			if len(out.Problems) > 0 {
				t.Fatalf("problems: %v", out.Problems)
			}
			if got := string(out.Files["np.yaml"]); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// TestBrokenResultIsRefused: an edit whose result would no longer read as the same objects is not
// written.
func TestBrokenResultIsRefused(t *testing.T) {
	in := "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: x}\nspec: {}\n"
	out := fix.Apply(load(t, "np.yaml", in), scripted(func(o *objects.Object) []validators.Edit {
		return []validators.Edit{{Object: o, Op: validators.EditSet, Key: "apiVersion", Value: validators.Scalar("karpenter.sh/v2")}}
	}))
	if len(out.Files) != 0 || len(out.Problems) != 1 || !strings.Contains(out.Problems[0], "would not read back cleanly") {
		t.Fatalf("files %d, problems %q", len(out.Files), out.Problems)
	}
}

func TestDeleteOnlyEntryRemovesParentKey(t *testing.T) {
	in := "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: x\n  annotations:\n    # the conversion left this\n    compatibility.karpenter.k8s.aws/v1-alias-version: \"1\"\nspec: {}\n"
	out := fix.Apply(load(t, "nc.yaml", in), scripted(func(o *objects.Object) []validators.Edit {
		return []validators.Edit{{Object: o, Path: []any{"metadata", "annotations"}, Op: validators.EditDelete, Key: "compatibility.karpenter.k8s.aws/v1-alias-version"}}
	}))
	want := "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: x\nspec: {}\n"
	if got := string(out.Files["nc.yaml"]); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestUnsupportedLayoutsAreReportedNotBroken(t *testing.T) {
	for _, tc := range []struct {
		name, file, in string
		edits          func(o *objects.Object) []validators.Edit
		problem        string
	}{
		{
			name: "json file", file: "nc.json",
			in: `{"apiVersion": "karpenter.k8s.aws/v1beta1", "kind": "EC2NodeClass", "metadata": {"name": "x"}, "spec": {}}`,
			edits: func(o *objects.Object) []validators.Edit {
				return []validators.Edit{{Object: o, Op: validators.EditSet, Key: "apiVersion", Value: validators.Scalar("karpenter.k8s.aws/v1")}}
			},
			problem: "JSON files are not rewritten",
		},
		{
			name: "multi-line flow mapping", file: "np.yaml",
			in: "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: x}\nspec:\n  template:\n    spec:\n      nodeClassRef: {apiVersion: karpenter.k8s.aws/v1beta1,\n        name: x}\n",
			edits: func(o *objects.Object) []validators.Edit {
				return []validators.Edit{{Object: o, Path: []any{"spec", "template", "spec", "nodeClassRef"}, Op: validators.EditDelete, Key: "apiVersion"}}
			},
			problem: "spans lines",
		},
		{
			name: "block scalar value", file: "nc.yaml",
			in: "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: x}\nspec:\n  instanceProfile: >-\n    arn:aws:iam::1:instance-profile/p\n",
			edits: func(o *objects.Object) []validators.Edit {
				return []validators.Edit{{Object: o, Path: []any{"spec"}, Op: validators.EditSet, Key: "instanceProfile", Value: validators.Scalar("p")}}
			},
			problem: "not a one-line scalar",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := fix.Apply(load(t, tc.file, tc.in), scripted(tc.edits))
			if len(out.Files) != 0 {
				t.Errorf("file changed:\n%s", out.Files[tc.file])
			}
			if len(out.Problems) != 1 || !strings.Contains(out.Problems[0], tc.problem) {
				t.Errorf("problems %q, want one mentioning %q", out.Problems, tc.problem)
			}
		})
	}
}

func catalogEvaluator() fix.Evaluator {
	cat := rules.Default()
	return func(s *manifest.Set) validators.Result {
		return cat.Evaluate(&validators.Context{Context: context.Background(), Facts: facts.None{}, Input: s.Objects, Scope: validators.ScopeCLI}, s.Objects)
	}
}

// FuzzFix applies every fix of the real catalog to arbitrary input: it must never panic, never leave a
// file that reads back worse, and a second pass must change nothing.
func FuzzFix(f *testing.F) {
	f.Add([]byte("apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata:\n  name: a\n  annotations:\n    compatibility.karpenter.sh/v1beta1-kubelet-conversion: x\nspec:\n  template:\n    metadata:\n      annotations: {karpenter.sh/do-not-evict: \"true\"}\n    spec:\n      nodeClassRef: {apiVersion: karpenter.k8s.aws/v1beta1, name: a}\n      kubelet: {maxPods: 1}\n  disruption: {consolidationPolicy: WhenUnderutilized, expireAfter: 1h}\n---\napiVersion: karpenter.k8s.aws/v1beta1\nkind: EC2NodeClass\nmetadata: {name: a}\nspec:\n  amiFamily: AL2\n  instanceProfile: arn:aws:iam::1:instance-profile/x\n"))
	f.Add([]byte("apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: b\nspec:\n  amiSelectorTerms:\n  - name: amazon-eks-node-1.29-*\n  - {name: bottlerocket-aws-k8s-*}\n"))
	// Over the YAML budget, beside a document with fixes: aliases that expand to billions of nodes, or
	// inside their own anchor.
	fixable := "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: c}\nspec:\n  instanceProfile: arn:aws:iam::1:instance-profile/x\n---\n"
	bomb := "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: bomb}\nspec:\n  tags:\n    a0: &a0 lol\n"
	for i := 1; i <= 9; i++ {
		bomb += fmt.Sprintf("    a%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d,", i-1), 9), ","))
	}
	for _, doc := range []string{
		bomb,
		"apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: m}\nspec:\n  tags: &b {<<: *b}\n",
		"apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: v}\nspec: &s\n  instanceProfile: arn:aws:iam::1:instance-profile/x\n  tags: {a: *s}\n",
		"apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: l}\nspec:\n  template:\n    spec:\n      requirements: &r [{key: a, operator: In, values: *r}]\n",
	} {
		f.Add([]byte(fixable + doc))
	}
	eval := catalogEvaluator()
	f.Fuzz(func(t *testing.T, data []byte) {
		set := load(t, "fuzz.yaml", string(data))
		out := fix.Apply(set, eval)
		fixed, ok := out.Files["fuzz.yaml"]
		if !ok {
			return
		}
		before, _, beforeErrs := manifest.Parse("fuzz.yaml", data)
		after, _, afterErrs := manifest.Parse("fuzz.yaml", fixed)
		if len(after) != len(before) || len(afterErrs) > len(beforeErrs) {
			t.Fatalf("fixed file reads back worse: %d→%d objects, %d→%d errors\n%s", len(before), len(after), len(beforeErrs), len(afterErrs), fixed)
		}
		again := fix.Apply(load(t, "fuzz.yaml", string(fixed)), eval)
		if second, changed := again.Files["fuzz.yaml"]; changed {
			t.Fatalf("second fix changed the file again:\n--- first\n%s\n--- second\n%s", fixed, second)
		}
	})
}
