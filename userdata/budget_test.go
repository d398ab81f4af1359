package userdata

import (
	"fmt"
	"strings"
	"testing"
)

// laughsNodeConfig is a NodeConfig whose kubelet config holds levels levels of nine aliases.
func laughsNodeConfig(levels int) string {
	var b strings.Builder
	b.WriteString("apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    flags: &a0 [--v=2]\n    config:\n")
	for i := 1; i <= levels; i++ {
		fmt.Fprintf(&b, "      a%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d,", i-1), 9), ","))
	}
	return b.String()
}

// Over the YAML budget; they seed FuzzParse and FuzzRegisters too.
var (
	budgetNodeConfigs = []struct {
		name, text, err string
	}{
		{"billion laughs", laughsNodeConfig(9), "NodeConfig in userData is not valid YAML: line 10: YAML aliases expand this document to"},
		{"merge key inside its own anchor", "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec: &s {kubelet: {flags: [a]}, <<: *s}\n",
			"NodeConfig in userData is not valid YAML: line 3: alias *s is inside the value of its own anchor &s (line 3)"},
		{"flags inside their own spec", "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec: &s\n  kubelet:\n    flags: [*s]\n",
			"NodeConfig in userData is not valid YAML: line 5: alias *s is inside the value of its own anchor &s"},
		{"in a MIME part", mimeDoc("Content-Type: application/node.eks.aws\n\napiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec: &s {kubelet: {flags: [*s]}}\n"),
			"NodeConfig in MIME part 1 of userData is not valid YAML: line 3 of the part: alias *s is inside"},
	}
	budgetCloudConfigs = []string{
		"#cloud-config\nruncmd: &r [[kubelet, *r]]\n",
		"#cloud-config\nwrite_files: &w\n- {path: /etc/x, content: *w}\n",
		"#cloud-config\n" + strings.TrimPrefix(laughsNodeConfig(9), "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\n"),
	}
)

// TestParseYAMLBudget: a NodeConfig over the YAML budget is invalid, as nodeadm, which reads it with
// Kubernetes' YAML reader, refuses it, with the line of the alias; the registration taint is not looked
// for in YAML over the budget, which is read as opaque text.
func TestParseYAMLBudget(t *testing.T) {
	for _, tc := range budgetNodeConfigs {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(FamilyAL2023, tc.text)
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("got %v, want %s…", err, tc.err)
			}
		})
	}
	for _, text := range budgetCloudConfigs {
		if _, err := yamlDocuments(text); err == nil {
			t.Errorf("%.40q: read as YAML", text)
		}
		ud, err := Parse(FamilyCustom, text)
		if err != nil {
			t.Fatal(err)
		}
		if r := ud.Registers(UnregisteredTaintKey, UnregisteredTaintEffect); r.Verdict == Registered {
			t.Errorf("%.40q: %+v", text, r)
		}
	}
	ud, err := Parse(FamilyAL2023, "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  featureGates: &g {InstanceIdNodeName: true}\n  kubelet:\n    config:\n      registerWithTaints: &t [{key: karpenter.sh/unregistered, effect: NoExecute}]\n")
	if err != nil {
		t.Fatalf("anchors used normally: %v", err)
	}
	if on, set := ud.FeatureGate("InstanceIdNodeName"); !on || !set {
		t.Error("anchored feature gates not read")
	}
	if r := ud.Registers(UnregisteredTaintKey, UnregisteredTaintEffect); r.Verdict != Registered {
		t.Errorf("anchored taints: %+v", r)
	}
}
