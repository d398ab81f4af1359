package rules

import (
	"fmt"
	"strings"
)

// This file holds how messages name things.

// quoteList renders strings quoted and comma-separated: "a", "b".
func quoteList(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}

// namedList names things as `EC2NodeClass "a"` or `EC2NodeClasses "a", "b"`.
func namedList(names []string, one, many string) string {
	if len(names) == 1 {
		return one + " " + quoteList(names)
	}
	return many + " " + quoteList(names)
}
