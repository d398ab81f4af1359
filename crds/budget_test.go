package crds

import (
	"fmt"
	"strings"
	"testing"
)

// TestDecodeCRDsYAMLBudget: --karpenter-crds reads YAML through apimachinery's decoder (yaml.v2), which
// bounds aliases itself: a CRD file whose aliases expand to a billion nodes, or refer to themselves,
// is an error, not a crash.
func TestDecodeCRDsYAMLBudget(t *testing.T) {
	head := "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: x.karpenter.sh}\n"
	var laughs strings.Builder
	laughs.WriteString(head + "spec:\n  a0: &a0 lol\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&laughs, "  a%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d,", i-1), 9), ","))
	}
	for _, tc := range []struct{ name, doc, want string }{
		{"billion laughs", laughs.String(), "excessive aliasing"},
		{"merge key inside its own anchor", head + "spec: &s {<<: *s}\n", "value contains itself"},
		{"list inside its own anchor", head + "spec:\n  versions: &v [*v]\n", "value contains itself"},
		{"100,000 nested lists", head + "spec:\n  versions: " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "\n", "exceeded max depth"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeCRDs([]byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want …%s…", err, tc.want)
			}
		})
	}
}
