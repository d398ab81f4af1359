// Package wording holds the small wording helpers the reports, the webhook and the rules share.
package wording

import (
	"fmt"
	"strings"
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
