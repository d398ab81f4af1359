package facts

import (
	"strconv"
	"testing"
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
