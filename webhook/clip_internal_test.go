package webhook

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestClip: warnings and message lines are cut at a word boundary with "…", within the byte limit
// the API server allows, and on a rune boundary when a single word is longer than the room.
func TestClip(t *testing.T) {
	arn := "arn:aws:iam::123456789012:role/" + strings.Repeat("VeryLongRoleName", 20)
	for _, tc := range []struct {
		name, in string
		n        int
		want     string
	}{
		{"fits", "the quick brown fox", 19, "the quick brown fox"},
		{"at the last word boundary", "the quick brown fox jumps", 14, "the quick…"},
		{"the cut falls at a word's end", "the quick brown fox", 12, "the quick…"},
		{"no punctuation before the ellipsis", "checks: a, b, c, d", 13, "checks: a…"},
		{"multibyte runes, word boundary", "ééé ééé ééé", 16, "ééé ééé…"},
		{"multibyte runes, cut inside a rune", "ééé ééé ééé", 15, "ééé…"},
		{"a single overlong word: on a rune boundary", "日本語の文章です", 10, "日本…"},
		{"a single overlong word after a short prefix", "[node-role] " + arn, 40, ("[node-role] " + arn)[:37] + "…"},
		{"a warning at the API server's limit", "[rule] " + strings.Repeat("word ", 100), maxWarning, "[rule] " + strings.Repeat("word ", 48) + "word…"},
		{"invalid UTF-8", "\xff\xff abc defghij", 12, "\uFFFD abc…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := clip(tc.in, tc.n)
			if got != tc.want {
				t.Errorf("clip(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
			}
			if len(got) > tc.n || !utf8.ValidString(got) {
				t.Errorf("clip(%q, %d) = %q: %d bytes or not UTF-8", tc.in, tc.n, got, len(got))
			}
		})
	}
}
