package awsauth

import (
	"reflect"
	"strings"
	"testing"
)

// maxLine is an upper bound on the line numbers yaml can give inside s: it counts every character
// YAML may treat as a line break.
func maxLine(s string) int {
	return 1 + strings.Count(s, "\n") + strings.Count(s, "\r") + strings.Count(s, "\u0085") +
		strings.Count(s, "\u2028") + strings.Count(s, "\u2029")
}

// FuzzParse checks that Parse never panics on any mapRoles/mapUsers/mapAccounts values, that every
// problem names its key, a line inside the value and a one-line message, that the entries it returns
// are complete, and that parsing is deterministic.
func FuzzParse(f *testing.F) {
	f.Add(nodeRole, "- userarn: arn:aws:iam::111122223333:user/ops\n  username: ops\n  groups: [system:masters]\n", "- \"111122223333\"\n")
	f.Add("---\n"+nodeRole+"- rolearn: arn:aws:iam::111122223333:role/b\n  usernmae: b\n", "", "")
	f.Add("---\n- rolearn: a\n\tusername: a\n", "- userarn: \"u\n", "111122223333")
	f.Add("- rolearn: a\n  username: a\n  groups:\n    - [x]\n    - {y: z}\n", "rolearn: a\n", "- []\n- ~\n")
	f.Add("- &e {rolearn: a, username: b}\n- *e\n- <<: *e\n", "- *missing\n", "[\n")
	f.Fuzz(func(t *testing.T, roles, users, accounts string) {
		data := map[string]string{KeyMapRoles: roles, KeyMapUsers: users, KeyMapAccounts: accounts}
		cfg, problems := Parse(data)
		cfg2, problems2 := Parse(data)
		if !reflect.DeepEqual(cfg, cfg2) || !reflect.DeepEqual(problems, problems2) {
			t.Fatalf("Parse is not deterministic:\n  %#v %v\n  %#v %v", cfg, problems, cfg2, problems2)
		}
		for _, p := range problems {
			v, ok := data[p.Key]
			if !ok {
				t.Fatalf("problem %#v names key %q, want one of the data keys", p, p.Key)
			}
			if p.Line < 0 || p.Line > maxLine(v) {
				t.Fatalf("problem %#v: line %d is outside the %d-line value", p, p.Line, maxLine(v))
			}
			if strings.TrimSpace(p.Message) == "" || strings.ContainsAny(p.Message, "\r\n") {
				t.Fatalf("problem %#v: want a one-line message", p)
			}
			if !strings.HasPrefix(p.String(), p.Key) {
				t.Fatalf("problem %#v: String() = %q does not start with the key", p, p.String())
			}
		}
		for _, r := range cfg.MapRoles {
			if r.RoleARN == "" || r.Username == "" || r.Line < 1 || r.Line > maxLine(roles) {
				t.Fatalf("returned incomplete role mapping %#v", r)
			}
		}
		for _, u := range cfg.MapUsers {
			if u.UserARN == "" || u.Username == "" || u.Line < 1 || u.Line > maxLine(users) {
				t.Fatalf("returned incomplete user mapping %#v", u)
			}
		}
		for _, a := range cfg.MapAccounts {
			if a == "" {
				t.Fatalf("returned an empty account id in %q", cfg.MapAccounts)
			}
		}
		// Each key is parsed on its own: a key's result does not depend on the others.
		alone, aloneProblems := Parse(map[string]string{KeyMapRoles: roles})
		if !reflect.DeepEqual(alone.MapRoles, cfg.MapRoles) {
			t.Fatalf("mapRoles parsed alone gives %#v, with the other keys %#v", alone.MapRoles, cfg.MapRoles)
		}
		var rolesProblems []Problem
		for _, p := range problems {
			if p.Key == KeyMapRoles {
				rolesProblems = append(rolesProblems, p)
			}
		}
		if !reflect.DeepEqual(aloneProblems, rolesProblems) {
			t.Fatalf("mapRoles problems alone %v, with the other keys %v", aloneProblems, rolesProblems)
		}
	})
}
