package awsauth

import (
	"encoding/json"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	yaml2 "go.yaml.in/yaml/v2"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// maxLine is an upper bound on the line numbers yaml can give inside s: it counts every character
// YAML may treat as a line break.
func maxLine(s string) int {
	return 1 + strings.Count(s, "\n") + strings.Count(s, "\r") + strings.Count(s, "\u0085") +
		strings.Count(s, "\u2028") + strings.Count(s, "\u2029")
}

// reference reads data the way aws-iam-authenticator's ParseMap and MapStore.saveMap do, in as few
// lines as possible and without any of Read's diagnostics: the oracle FuzzParse checks Read's Config
// against. It returns the role and user mappings stored under each key, in the order of the entries
// that set them, and the account ids.
func reference(data map[string]string) (roles []roleJSON, users []userJSON, accounts []string) {
	skip := func(v string) bool {
		t := strings.TrimSpace(v)
		return t == "" || t == "``" || t == `""` || t == "''"
	}
	if v, ok := data["mapRoles"]; ok && !skip(v) {
		if j, err := utilyaml.ToJSON([]byte(v)); err == nil {
			var raw []roleJSON
			_ = json.Unmarshal(j, &raw)
			for _, m := range raw {
				if referenceValid(m) {
					roles = append(roles, m)
				}
			}
		}
	}
	if v, ok := data["mapUsers"]; ok && !skip(v) {
		if j, err := utilyaml.ToJSON([]byte(v)); err == nil {
			var raw []userJSON
			_ = json.Unmarshal(j, &raw)
			for _, m := range raw {
				if m.UserARN != "" {
					users = append(users, m)
				}
			}
		}
	}
	if v, ok := data["mapAccounts"]; ok && !skip(v) {
		_ = yaml2.Unmarshal([]byte(v), &accounts)
	}
	// saveMap: the last entry for a key wins.
	roleKey := func(m roleJSON) string {
		if m.RoleARN != "" {
			return strings.ToLower(m.RoleARN)
		}
		p := ""
		if m.SSO.Partition == "" {
			p = "aws"
		}
		return strings.ToLower("arn:" + p + ":iam::" + m.SSO.AccountID + ":role/AWSReservedSSO_" + m.SSO.PermissionSetName + "_*")
	}
	return lastWins(roles, roleKey), lastWins(users, func(m userJSON) string { return m.UserARN }), accounts
}

// referenceValid is the authenticator's RoleMapping.Validate.
func referenceValid(m roleJSON) bool {
	if (m.RoleARN == "") == (m.SSO == nil) {
		return false
	}
	if m.SSO == nil {
		return true
	}
	return regexp.MustCompile("^[0-9]{12}$").MatchString(m.SSO.AccountID) &&
		regexp.MustCompile(`^[\w+=,.@-]{1,32}$`).MatchString(m.SSO.PermissionSetName) &&
		(m.SSO.Partition == "" || slices.Contains([]string{"aws", "aws-cn", "aws-us-gov", "aws-iso", "aws-iso-b", "aws-iso-e", "aws-iso-f", "aws-eusc"}, m.SSO.Partition))
}

func lastWins[T any](ms []T, key func(T) string) []T {
	last := map[string]int{}
	for i, m := range ms {
		last[key(m)] = i
	}
	var out []T
	for i, m := range ms {
		if last[key(m)] == i {
			out = append(out, m)
		}
	}
	return out
}

// FuzzParse checks that Read never panics on any mapRoles/mapUsers/mapAccounts values; that what it
// keeps is what the authenticator keeps (reference); that every problem names its key, a line inside
// the value, a one-line message and what EKS does; that Parse keeps exactly the malformed problems;
// that every key is read on its own; and that reading is deterministic.
func FuzzParse(f *testing.F) {
	f.Add(nodeRole, "- userarn: arn:aws:iam::111122223333:user/ops\n  username: ops\n  groups: [system:masters]\n", "- \"111122223333\"\n")
	f.Add("---\n"+nodeRole+"- rolearn: arn:aws:iam::111122223333:role/b\n  usernmae: b\n", "", "")
	f.Add("---\n- rolearn: a\n\tusername: a\n", "- userarn: \"u\n", "111122223333")
	f.Add("- rolearn: a\n  username: a\n  groups:\n    - [x]\n    - {y: z}\n", "rolearn: a\n", "- []\n- ~\n")
	f.Add("- &e {rolearn: a, username: b}\n- *e\n- <<: *e\n", "- *missing\n", "[\n")
	f.Add("- rolearn: a\n  groups:\n  - system:bootstrappers\n   - system:nodes\n", "- UserArn: u\n  userarn: v\n  userarn: w\n", "- 0123\n- yes\n")
	f.Add("- sso: {permissionSetName: P, accountID: \"111122223333\", partition: aws-cn}\n- sso: x\n- rolearn: [a]\n  sso: {}\n", " {\"a\": 1}", "{a: b}")
	f.Add("- rolearn: a\n  username: .inf\n", "- userarn: a\n  ~: b\n", "- 1\n- [2]\n")
	for _, v := range budgetValues {
		f.Add(v.value, v.value, v.value)
	}
	f.Fuzz(func(t *testing.T, roles, users, accounts string) {
		data := map[string]string{KeyMapRoles: roles, KeyMapUsers: users, KeyMapAccounts: accounts}
		r, r2 := Read(data), Read(data)
		if !reflect.DeepEqual(r, r2) {
			t.Fatalf("Read is not deterministic:\n  %#v\n  %#v", r, r2)
		}

		// What EKS keeps.
		wantRoles, wantUsers, wantAccounts := reference(data)
		if len(r.Config.MapRoles) != len(wantRoles) {
			t.Fatalf("kept %d role mappings %#v, the authenticator %d %#v", len(r.Config.MapRoles), r.Config.MapRoles, len(wantRoles), wantRoles)
		}
		for i, m := range r.Config.MapRoles {
			w := wantRoles[i]
			if m.RoleARN != w.RoleARN || m.Username != w.Username || !reflect.DeepEqual(m.Groups, w.Groups) || (m.SSO == nil) != (w.SSO == nil) ||
				(m.SSO != nil && (*m.SSO != SSO{PermissionSetName: w.SSO.PermissionSetName, AccountID: w.SSO.AccountID, Partition: w.SSO.Partition})) {
				t.Fatalf("role mapping %d is %#v, the authenticator's %#v", i, m, w)
			}
		}
		if len(r.Config.MapUsers) != len(wantUsers) {
			t.Fatalf("kept %d user mappings %#v, the authenticator %d %#v", len(r.Config.MapUsers), r.Config.MapUsers, len(wantUsers), wantUsers)
		}
		for i, m := range r.Config.MapUsers {
			if w := wantUsers[i]; m.UserARN != w.UserARN || m.Username != w.Username || !reflect.DeepEqual(m.Groups, w.Groups) {
				t.Fatalf("user mapping %d is %#v, the authenticator's %#v", i, m, w)
			}
		}
		if len(r.Config.MapAccounts) != len(wantAccounts) || (len(wantAccounts) > 0 && !reflect.DeepEqual(r.Config.MapAccounts, wantAccounts)) {
			t.Fatalf("accounts %q, the authenticator's %q", r.Config.MapAccounts, wantAccounts)
		}
		for _, m := range r.Config.MapRoles {
			if (m.RoleARN == "") == (m.SSO == nil) || m.Line < 0 || m.Line > maxLine(roles) {
				t.Fatalf("returned role mapping %#v", m)
			}
		}
		for _, m := range r.Config.MapUsers {
			if m.UserARN == "" || m.Line < 0 || m.Line > maxLine(users) {
				t.Fatalf("returned user mapping %#v", m)
			}
		}

		// The problems.
		for _, p := range r.Problems {
			v, ok := data[p.Key]
			if !ok {
				t.Fatalf("problem %#v names key %q, want one of the data keys", p, p.Key)
			}
			if p.Line < 0 || p.Line > maxLine(v) {
				t.Fatalf("problem %#v: line %d is outside the %d-line value", p, p.Line, maxLine(v))
			}
			for _, s := range []string{p.Message, p.Outcome} {
				if strings.TrimSpace(s) == "" || strings.ContainsAny(s, "\r\n") {
					t.Fatalf("problem %#v: want a one-line message and outcome", p)
				}
			}
			if p.Effect < IgnoresValue || p.Effect > Ambiguous {
				t.Fatalf("problem %#v: no effect", p)
			}
			if !strings.HasPrefix(p.String(), p.Key) {
				t.Fatalf("problem %#v: String() = %q does not start with the key", p, p.String())
			}
			if p.Entry != nil && p.Key == KeyMapRoles && (p.Entry.Index >= len(r.Roles) || *p.Entry != r.Roles[p.Entry.Index]) {
				t.Fatalf("problem %#v names entry %+v, not the one in Roles", p, p.Entry)
			}
		}
		kept := 0
		for _, e := range r.Roles {
			if e.Kept {
				kept++
			}
		}
		if all, _, _ := reference(map[string]string{KeyMapRoles: roles}); kept < len(all) {
			t.Fatalf("%d entries kept, but the authenticator stores %d mappings", kept, len(all))
		}
		_, malformed := Parse(data)
		var want []Problem
		for _, p := range r.Problems {
			if p.Effect.Malformed() {
				want = append(want, p)
			}
		}
		if !reflect.DeepEqual(malformed, want) {
			t.Fatalf("Parse problems %v, want the malformed ones of Read %v", malformed, want)
		}

		// Each key is read on its own: a key's result does not depend on the others.
		alone := Read(map[string]string{KeyMapRoles: roles})
		if !reflect.DeepEqual(alone.Config.MapRoles, r.Config.MapRoles) || !reflect.DeepEqual(alone.Roles, r.Roles) {
			t.Fatalf("mapRoles read alone gives %#v, with the other keys %#v", alone.Config.MapRoles, r.Config.MapRoles)
		}
		var rolesProblems []Problem
		for _, p := range r.Problems {
			if p.Key == KeyMapRoles {
				rolesProblems = append(rolesProblems, p)
			}
		}
		if !reflect.DeepEqual(alone.Problems, rolesProblems) {
			t.Fatalf("mapRoles problems alone %v, with the other keys %v", alone.Problems, rolesProblems)
		}
	})
}
