package facts

import (
	"context"
	"reflect"
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

// FuzzFoldLookups: the indexed lookups answer as the scans they replaced (the first item whose name
// or ARN strings.EqualFold the question): aws-auth mappings by rolearn, and a snapshot's roles and
// instance profiles by name and access entries by the role's ARN or path-less ARN, for keys and
// questions that mix case, repeat, and fold beyond ASCII (the Kelvin sign is a k, the long s an s).
func FuzzFoldLookups(f *testing.F) {
	f.Add("arn:aws:iam::111122223333:role/Node", "arn:aws:iam::111122223333:role/node", "arn:aws:iam::111122223333:role/x/NODE", "arn:aws:iam::111122223333:role/x/node")
	f.Add("arn:aws:iam::1:role/a", "arn:aws:iam::1:role/b", "arn:aws:iam::1:role/A", "arn:aws:iam::1:role/B")
	f.Add("arn:aws:iam::1:role/\u212a", "arn:aws:iam::1:role/k", "arn:aws:iam::1:role/K", "arn:aws:iam::1:role/p/k")
	f.Add("s", "\u017f", "S", "\u017f")
	f.Add("\u017f", "s", "x", "S")
	f.Fuzz(func(t *testing.T, a, b, c, question string) {
		keys := []string{a, b, c}
		first := func(match func(string) bool) int {
			for i, k := range keys {
				if match(k) {
					return i
				}
			}
			return -1
		}
		at := func(want int, got, base any) {
			t.Helper()
			if want < 0 {
				if !reflect.ValueOf(got).IsNil() {
					t.Fatalf("over %q, question %q: found %v, the scan finds none", keys, question, got)
				}
				return
			}
			if reflect.ValueOf(got).Pointer() != reflect.ValueOf(base).Index(want).Addr().Pointer() {
				t.Fatalf("over %q, question %q: found %v, the scan finds item %d", keys, question, got, want)
			}
		}
		d := &AWSAuthData{}
		var roles []Role
		var profiles []InstanceProfile
		var entries []AccessEntry
		for _, k := range keys {
			d.Config.MapRoles = append(d.Config.MapRoles, awsauth.RoleMapping{RoleARN: k})
			roles = append(roles, Role{Name: k})
			profiles = append(profiles, InstanceProfile{Name: k})
			entries = append(entries, AccessEntry{PrincipalARN: k})
		}
		equal := func(k string) bool { return strings.EqualFold(k, question) }
		at(first(equal), d.RoleMapping(question), d.Config.MapRoles)

		s := NewSnapshot(&ClusterFacts{Roles: &roles, InstanceProfiles: &profiles, AccessEntries: &entries})
		ctx := context.Background()
		r, _ := s.Role(ctx, question)
		at(first(equal), r, roles)
		p, _ := s.InstanceProfile(ctx, question)
		at(first(equal), p, profiles)
		role := &Role{Name: lastSegmentOf(question), ARN: question}
		e, _ := s.AccessEntry(ctx, role)
		at(first(role.PrincipalMatcher()), e, entries)
	})
}

func lastSegmentOf(arn string) string { return arn[strings.LastIndex(arn, "/")+1:] }
