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
		n, kind := factList(r, "", "—"), r.KindLabel(", ")
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

// Reference renders docs/rules.md: one section per rule, anchored by its ID, with its kind, default
// action, facts, its paragraph of documentation, and where its code, test and golden messages are.
// sources maps rule IDs to the file that declares them, tests to the file of their table test.
func (c *Catalog) Reference(sources, tests map[string]string) string {
	var b strings.Builder
	b.WriteString("# Rules\n\nGenerated from the catalog (`make readme`); `karpenter-guard rules` prints the same. Actions: " +
		"`deny` refuses (the CLI exits 1), `warn` warns, `audit` only records; a GuardConfig can change any rule's " +
		"action (`rules: {<id>: off}`). Facts in parentheses are read only in some cases.\n")
	for _, r := range c.rules {
		n, kind := factList(r, "`", "none"), r.KindLabel(", ")
		fixable := "no"
		if r.Fixable {
			fixable = "yes (`check --fix`, and the mutating webhook where it is safe)"
		}
		src, test := sources[r.ID], tests[r.ID]
		fmt.Fprintf(&b, "\n## %s\n\n%s\n\n- applies to: %s\n- default action: `%s`\n- facts: %s\n- fixable: %s\n- code: [%s](../%s); test: [%s](../%s); messages: [validators/rules/testdata/%s.golden](../validators/rules/testdata/%s.golden)\n",
			r.ID, r.Doc, kind, r.DefaultAction, n, fixable, src, src, test, test, r.ID, r.ID)
	}
	return b.String()
}

// factList renders the facts a rule needs, each between quote, then those it may need in
// parentheses; none when there are no facts.
func factList(r *Rule, quote, none string) string {
	var needs []string
	for _, n := range r.Needs {
		needs = append(needs, quote+string(n)+quote)
	}
	for _, m := range r.MayNeed {
		needs = append(needs, "("+quote+string(m)+quote+")")
	}
	if len(needs) == 0 {
		return none
	}
	return strings.Join(needs, ", ")
}
