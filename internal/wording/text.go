// Package wording holds the small wording helpers the reports, the webhook and the rules share.
package wording

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Plural counts n things: "1 check", "3 checks".
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// OneLine collapses runs of white space, newlines included, into single spaces.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Clip cuts s to at most n bytes, on a rune boundary, ending the cut with "…" and note (a
// "(clipped …)" that says where the whole text is, or ""): what the API server and its clients keep
// is bounded, and a user's text can be of any length. Bytes that are not UTF-8 become U+FFFD first,
// as they would in JSON. s is returned as it is when it fits.
func Clip(s string, n int, note string) string {
	if len(s) <= n {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	tail := "…" + note
	cut := max(n-len(tail), 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + tail
}
