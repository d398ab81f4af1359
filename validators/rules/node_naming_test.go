package rules

import (
	"context"
	"strings"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

// TestRememberedNodeNaming: a catalog that remembers the naming of userData texts names the nodes of
// each class as a new catalog does, when classes of several families share a text and when texts
// differ only in the gate's value.
func TestRememberedNodeNaming(t *testing.T) {
	gate := func(on string) string {
		return "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  featureGates:\n    InstanceIdNodeName: " + on + "\n"
	}
	class := func(amiLines, userData string) string {
		return "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: probe\nspec:\n" +
			"  " + strings.ReplaceAll(strings.TrimSuffix(amiLines, "\n"), "\n", "\n  ") + "\n" +
			"  role: KarpenterNodeRole-prod\n  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: prod}}]\n" +
			"  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: prod}}]\n" +
			"  userData: |\n    " + strings.ReplaceAll(strings.TrimSuffix(userData, "\n"), "\n", "\n    ") + "\n"
	}
	const (
		al2023 = "amiSelectorTerms: [{alias: al2023@latest}]\n"
		custom = "amiFamily: Custom\namiSelectorTerms: [{id: ami-0aa11bb22cc33dd44}]\n"
		al2    = "amiSelectorTerms: [{alias: al2@latest}]\n"
		bottle = "amiSelectorTerms: [{alias: bottlerocket@latest}]\n"
	)
	var named []nodeNaming
	probe := &validators.Rule{ID: "probe", Kinds: []string{validators.KindEC2NodeClass}, DefaultAction: config.ActionWarn,
		Summary: "records the naming", Doc: "records the naming",
		Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
			named = append(named, nodeNamingOf(c, o))
			return nil, nil
		}}
	naming := func(cat *validators.Catalog, doc string) nodeNaming {
		t.Helper()
		named = nil
		objs := readObjects(t, doc)
		cat.Evaluate(&validators.Context{Context: context.Background(), Config: config.Default(), Facts: facts.None{}, Input: objs, Scope: validators.ScopeCLI}, objs)
		if len(named) != 1 {
			t.Fatalf("the probe ran %d times", len(named))
		}
		return named[0]
	}
	shared := validators.NewCatalog(probe)
	for _, tc := range []struct {
		name, doc string
		want      nodeNaming
	}{
		{"AL2023, gate on", class(al2023, gate("true")), namingInstanceID},
		{"Custom, the same text", class(custom, gate("true")), namingInstanceID},
		{"AL2, the same text", class(al2, gate("true")), namingPrivateDNS},
		{"Bottlerocket, the same text", class(bottle, gate("true")), namingPrivateDNS},
		{"AL2023, gate off", class(al2023, gate("false")), namingPrivateDNS},
		{"AL2023, gate on again", class(al2023, gate("true")), namingInstanceID},
		{"Custom, gate off", class(custom, gate("false")), namingPrivateDNS},
	} {
		if got, fresh := naming(shared, tc.doc), naming(validators.NewCatalog(probe), tc.doc); got != tc.want || fresh != tc.want {
			t.Errorf("%s: named %s (a new catalog: %s), want %s", tc.name, got, fresh, tc.want)
		}
	}
}
