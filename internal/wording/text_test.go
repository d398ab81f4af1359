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

func TestClip(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		n        int
		note     string
		want     string
	}{
		{"fits", "abc", 3, " (clipped)", "abc"},
		{"cut, marked", "abcdefgh", 5, "", "ab…"},
		{"cut with a note", "abcdefghijklmnopqrst", 15, " (c)", "abcdefgh… (c)"},
		{"on a rune boundary", "ééééé", 6, "", "é…"}, // "é" is 2 bytes, "…" 3: 6 bytes leave room for one
		{"a run of invalid bytes becomes one U+FFFD", "\xff\xffabcdefghij", 10, "", "\uFFFDabcd…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Clip(tc.in, tc.n, tc.note)
			if got != tc.want || len(got) > tc.n {
				t.Errorf("Clip(%q, %d, %q) = %q (%d bytes), want %q", tc.in, tc.n, tc.note, got, len(got), tc.want)
			}
		})
	}
}
