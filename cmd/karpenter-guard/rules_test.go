package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestRulesDocumentation pins what `karpenter-guard rules ID` prints: a rule fixed by --fix from the
// manifest alone, one that needs cluster facts, and one no object can skip, in one run.
func TestRulesDocumentation(t *testing.T) {
	inRepoRoot(t)
	code, out, stderr := cli(t, "", "rules", "instance-profile-arn", "node-role-not-authorized", "exception-unknown-rule")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	goldenFile(t, "rules-documentation.txt", out)
}

// TestRulesDocumentationJSON: -o json of one rule is that rule's object, with its documentation; of
// several, a list.
func TestRulesDocumentationJSON(t *testing.T) {
	code, out, _ := cli(t, "", "rules", "ami-owner-not-allowed", "-o", "json")
	var one ruleJSON
	if code != 0 || json.Unmarshal([]byte(out), &one) != nil {
		t.Fatalf("exit %d, not one rule object:\n%s", code, out)
	}
	if one.ID != "ami-owner-not-allowed" || one.DefaultAction != "deny" || len(one.Needs) == 0 || one.Doc == "" || one.Summary == "" {
		t.Errorf("rule %+v: want its ID, default action, facts, summary and documentation", one)
	}
	code, out, _ = cli(t, "", "rules", "ami-owner-not-allowed", "instance-profile-arn", "-o", "json")
	var many []ruleJSON
	if code != 0 || json.Unmarshal([]byte(out), &many) != nil || len(many) != 2 || many[1].ID != "instance-profile-arn" || !many[1].Fixable {
		t.Fatalf("exit %d, want a list of the two rules:\n%s", code, out)
	}
}

// TestRulesUnknownID: a misspelt ID prints nothing, exits 2 and names the IDs nearest to it.
func TestRulesUnknownID(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"instance-profile"}, []string{`unknown rule "instance-profile"`, "instance-profile-arn", "instance-profile-not-found"}},
		{[]string{"instance-profile-arm"}, []string{`unknown rule "instance-profile-arm": did you mean instance-profile-arn,`}},
		{[]string{"subnet-public", "imds-v1"}, []string{`unknown rule "imds-v1": did you mean imds-v1-enabled`}},
		{[]string{"subnet-public", "-o", "markdown"}, []string{"markdown lists the whole catalog: leave the IDs out"}},
	} {
		code, out, stderr := cli(t, "", append([]string{"rules"}, tc.args...)...)
		if code != 2 || out != "" {
			t.Errorf("rules %v: exit %d, stdout %q; want 2 and nothing printed", tc.args, code, out)
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("rules %v: stderr %q does not say %q", tc.args, stderr, w)
			}
		}
	}
	// Without IDs, the catalog as before.
	if code, out, _ := cli(t, "", "rules"); code != 0 || !strings.HasPrefix(out, "ID ") {
		t.Errorf("rules: exit %d:\n%s", code, out)
	}
}
