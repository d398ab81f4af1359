package wording

import "testing"

func TestPlural(t *testing.T) {
	for n, want := range map[int]string{0: "0 checks", 1: "1 check", 2: "2 checks"} {
		if got := Plural(n, "check", "checks"); got != want {
			t.Errorf("Plural(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestOneLine(t *testing.T) {
	if got := OneLine("  a\n\tb  c\n"); got != "a b c" {
		t.Errorf("OneLine = %q", got)
	}
}
