package awsauth

import (
	"fmt"
	"strings"
	"testing"
)

// budgetValues are mapRoles, mapUsers and mapAccounts values whose aliases expand past what EKS's YAML
// reader (yaml.v2) accepts, or refer to themselves, or nest too deep. They seed FuzzParse too.
var budgetValues = []struct {
	name, value string
	line        int    // of the problem in mapRoles and mapUsers
	msg         string // in its message
}{
	{"billion laughs", laughsValue(9), 8, "not valid YAML: document contains excessive aliasing"},
	{"merge key inside its own anchor", "- &e {rolearn: a, username: b, <<: *e}\n", 1, "not valid YAML: anchor 'e' value contains itself"},
	{"groups inside their own entry", "- &e\n  rolearn: a\n  username: b\n  groups: [*e]\n", 4, "not valid YAML: anchor 'e' value contains itself"},
	{"list inside its own anchor", "&l [*l]\n", 1, "not valid YAML: anchor 'l' value contains itself"},
	{"100,000 nested lists", "- rolearn: a\n  username: b\n  groups: " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "\n", 3, "not valid YAML: exceeded max depth of 10000"},
}

// laughsValue is a role mapping whose x field holds levels levels of nine aliases.
func laughsValue(levels int) string {
	var b strings.Builder
	b.WriteString("- rolearn: arn:aws:iam::111122223333:role/n\n  username: system:node:{{EC2PrivateDNSName}}\n  groups: &a0 [system:nodes]\n  x:\n")
	for i := 1; i <= levels; i++ {
		fmt.Fprintf(&b, "    a%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d,", i-1), 9), ","))
	}
	return b.String()
}

// TestReadYAMLBudget: a value over the budget is ignored as EKS ignores it, with yaml.v2's reason at
// its line, and no layout is built from it: nothing walks its nodes, in the CLI or in the webhook.
func TestReadYAMLBudget(t *testing.T) {
	for _, tc := range budgetValues {
		t.Run(tc.name, func(t *testing.T) {
			for _, key := range []string{KeyMapRoles, KeyMapUsers} {
				r := Read(map[string]string{key: tc.value})
				if len(r.Problems) != 1 || r.Problems[0].Line != tc.line || r.Problems[0].Effect != IgnoresValue || !strings.Contains(r.Problems[0].Message, tc.msg) {
					t.Errorf("%s: problems %v, want one ignoring the value at line %d: …%s…", key, r.Problems, tc.line, tc.msg)
				}
				if len(r.Config.MapRoles)+len(r.Config.MapUsers) != 0 {
					t.Errorf("%s: kept %v %v", key, r.Config.MapRoles, r.Config.MapUsers)
				}
			}
			if r := Read(map[string]string{KeyMapAccounts: tc.value}); len(r.Config.MapAccounts) != 0 || len(r.Problems) != 1 {
				t.Errorf("mapAccounts: accounts %q, problems %v", r.Config.MapAccounts, r.Problems)
			}
			if tc.line != 3 { // yaml.v3 does not parse the nested lists at all
				if l := newLayout(tc.value); l.root != nil || l.items != nil {
					t.Errorf("a layout was built from a value over the budget")
				}
			}
		})
	}
	if l := newLayout("- &e {rolearn: a, username: b}\n- *e\n- {<<: *e, username: c}\n"); len(l.items) != 3 {
		t.Errorf("anchors used normally: layout of %d items", len(l.items))
	}
}
