package facts

import (
	"strconv"
	"strings"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/awsauth"
)

// TestTermString: a term's String is the selector as written, canonical (tag order does not matter)
// and unambiguous (values holding the separators do not collide), since it keys the caches.
func TestTermString(t *testing.T) {
	for _, tc := range []struct {
		term fmtStringer
		want string
	}{
		{ImageTerm{}, `{}`},
		{ImageTerm{Name: "amazon-eks-node-*", Owner: "amazon"}, `{name: "amazon-eks-node-*", owner: "amazon"}`},
		{ImageTerm{SSMParameter: "/aws/service/x"}, `{ssmParameter: "/aws/service/x"}`},
		{ImageTerm{Tags: map[string]string{"b": "2", "a": "1"}}, `{tags: {"a": "1", "b": "2"}}`},
		{SelectorTerm{ID: "subnet-1", Tags: map[string]string{"k": "*"}}, `{id: "subnet-1", tags: {"k": "*"}}`},
		{ImageTerm{Name: `a", owner: "b`}, `{name: "a\", owner: \"b"}`},
	} {
		if got := tc.term.String(); got != tc.want {
			t.Errorf("String() = %s; want %s", got, tc.want)
		}
	}
	a := ImageTerm{Name: `a", owner: "b`}
	b := ImageTerm{Name: "a", Owner: "b"}
	if a.String() == b.String() {
		t.Errorf("distinct terms share the key %s", a)
	}
}

type fmtStringer interface{ String() string }

// TestAppendQuoted: the fast path quotes exactly as strconv.Quote does.
func TestAppendQuoted(t *testing.T) {
	for _, s := range []string{"", "amazon-eks-node-*", `a"b`, `a\b`, "tab\there", "ünïcode", "\x00", "\x7f", "karpenter.sh/discovery"} {
		if got, want := string(appendQuoted(nil, s)), strconv.Quote(s); got != want {
			t.Errorf("appendQuoted(%q) = %s, want %s", s, got, want)
		}
	}
}

// FuzzRoleMapping: the indexed lookup answers as the scan it replaced (the first mapping whose
// rolearn strings.EqualFold the question), for mappings and questions that mix case, repeat, and
// fold beyond ASCII (the Kelvin sign is a k, the long s an s).
func FuzzRoleMapping(f *testing.F) {
	f.Add("arn:aws:iam::111122223333:role/Node", "arn:aws:iam::111122223333:role/node", "arn:aws:iam::111122223333:role/NODE", "arn:aws:iam::111122223333:role/node")
	f.Add("arn:aws:iam::1:role/a", "arn:aws:iam::1:role/b", "arn:aws:iam::1:role/A", "arn:aws:iam::1:role/B")
	f.Add("role/\u212a", "role/k", "role/K", "role/k")
	f.Add("role/s", "role/\u017f", "role/S", "role/\u017f")
	f.Fuzz(func(t *testing.T, a, b, c, question string) {
		d := &AWSAuthData{}
		for _, arn := range []string{a, b, c} {
			d.Config.MapRoles = append(d.Config.MapRoles, awsauth.RoleMapping{RoleARN: arn})
		}
		var want *awsauth.RoleMapping
		for i, rm := range d.Config.MapRoles {
			if strings.EqualFold(rm.RoleARN, question) {
				want = &d.Config.MapRoles[i]
				break
			}
		}
		if got := d.RoleMapping(question); got != want {
			t.Fatalf("RoleMapping(%q) over %q = %v, the scan finds %v", question, []string{a, b, c}, got, want)
		}
	})
}
