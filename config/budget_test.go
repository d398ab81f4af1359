package config

import (
	"fmt"
	"strings"
	"testing"
)

const configHead = "apiVersion: karpenter-guard.io/v1alpha1\nkind: GuardConfig\n"

// TestParseYAMLBudget: a configuration whose aliases expand past the YAML budget, refer to themselves or
// nest too deep is refused with the alias's line, quickly; anchors used normally still work.
func TestParseYAMLBudget(t *testing.T) {
	var laughs strings.Builder
	laughs.WriteString(configHead + "amiOwners:\n  allowed: &a0 [amazon]\nx:\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&laughs, "  a%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d,", i-1), 9), ","))
	}
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"billion laughs", laughs.String(), "line 9: YAML aliases expand this document to"},
		{"merge key inside its own anchor", configHead + "aws: &a {<<: *a}\n", "line 3: alias *a is inside the value of its own anchor &a (line 3)"},
		{"list inside its own anchor", configHead + "amiOwners:\n  allowed: &l [amazon, *l]\n", "line 4: alias *l is inside the value of its own anchor &l (line 4)"},
		{"100,000 nested lists", configHead + "amiOwners:\n  allowed: " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "\n", "exceeded max depth of 10000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.doc), []string{"subnet-public"})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want …%s…", err, tc.want)
			}
		})
	}
	c, err := Parse([]byte(configHead+"amiOwners:\n  allowed: &owners [amazon, self]\nx-copy: *owners\n"), nil)
	if err == nil || !strings.Contains(err.Error(), "x-copy") {
		t.Errorf("an unknown key beside an alias: %v", err)
	}
	c, err = Parse([]byte(configHead+"rules: &r {subnet-public: warn}\n"), []string{"subnet-public"})
	if err != nil || c.Rules["subnet-public"] != ActionWarn {
		t.Errorf("anchored rules: %v, %v", c, err)
	}
}
