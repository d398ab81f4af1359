package validators

import (
	"fmt"
	"strings"
)

// Markdown renders the catalog as the README's rule table. Facts in parentheses are read only in some
// cases (MayNeed). sources maps rule IDs to the file that
// declares them; when given, the table links each rule to its file.
func (c *Catalog) Markdown(sources map[string]string) string {
	var b strings.Builder
	if sources != nil {
		b.WriteString("| ID | kind | default | needs | fixable | trigger | file |\n|---|---|---|---|---|---|---|\n")
	} else {
		b.WriteString("| ID | kind | default | needs | fixable | trigger |\n|---|---|---|---|---|---|\n")
	}
	for _, r := range c.rules {
		var needs []string
		for _, n := range r.Needs {
			needs = append(needs, string(n))
		}
		for _, m := range r.MayNeed {
			needs = append(needs, "("+string(m)+")")
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
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |", r.ID, kind, r.DefaultAction, n, fixable, strings.ReplaceAll(r.Summary, "|", "\\|"))
		if sources != nil {
			fmt.Fprintf(&b, " [%s](%s) |", sources[r.ID], sources[r.ID])
		}
		b.WriteString("\n")
	}
	return b.String()
}
