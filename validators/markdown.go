package validators

import (
	"fmt"
	"strings"
)

// Markdown renders the catalog as the README's rule table.
func (c *Catalog) Markdown() string {
	var b strings.Builder
	b.WriteString("| ID | kind | default | needs | fixable | trigger |\n|---|---|---|---|---|---|\n")
	for _, r := range c.rules {
		var needs []string
		for _, n := range r.Needs {
			needs = append(needs, string(n))
		}
		n := strings.Join(needs, ", ")
		if n == "" {
			n = "—"
		}
		kind := strings.Join(r.Kinds, ", ")
		if r.Scope != ScopeAll {
			kind += " (" + string(r.Scope) + " only)"
		}
		fixable := ""
		if r.Fixable {
			fixable = "yes"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n", r.ID, kind, r.DefaultAction, n, fixable, strings.ReplaceAll(r.Summary, "|", "\\|"))
	}
	return b.String()
}
