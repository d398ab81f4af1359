package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/agnivade/levenshtein"
	"github.com/spf13/cobra"

	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/rules"
)

// ruleJSON is one catalog entry in `rules -o json`.
type ruleJSON struct {
	ID            string   `json:"id"`
	Kinds         []string `json:"kinds"`
	DefaultAction string   `json:"defaultAction"`
	Needs         []string `json:"needs"`
	MayNeed       []string `json:"mayNeed,omitempty"`
	Fixable       bool     `json:"fixable"`
	Scope         string   `json:"scope,omitempty"`
	Summary       string   `json:"summary"`
	Doc           string   `json:"doc"`
}

func newRuleJSON(r *validators.Rule) ruleJSON {
	needs := []string{}
	for _, n := range r.Needs {
		needs = append(needs, string(n))
	}
	var may []string
	for _, n := range r.MayNeed {
		may = append(may, string(n))
	}
	return ruleJSON{ID: r.ID, Kinds: r.Kinds, DefaultAction: string(r.DefaultAction), Needs: needs, MayNeed: may,
		Fixable: r.Fixable, Scope: string(r.Scope), Summary: r.Summary, Doc: r.Doc}
}

func newRulesCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "rules [ID...]",
		Short: "List the rule catalog, or print the documentation of the rules named",
		Long: "Without arguments, list the rule catalog: -o text (a table), json (with each rule's documentation) or\n" +
			"markdown (the README table). With rule IDs, print each rule's documentation (what it checks, its\n" +
			"default action, the facts it needs, whether --fix repairs it, what goes wrong and how to fix it):\n" +
			"-o text, or json (one object for one ID, a list for several). Nothing is asked of the network.",
		Example: "  karpenter-guard rules\n" +
			"  karpenter-guard rules instance-profile-arn\n" +
			"  karpenter-guard rules node-role-not-authorized -o json",
		RunE: func(cmd *cobra.Command, args []string) error {
			cat := rules.Default()
			out := cmd.OutOrStdout()
			if len(args) > 0 {
				return describeRules(out, cat, args, g.output)
			}
			switch g.output {
			case "json":
				var rules []ruleJSON
				for _, r := range cat.Rules() {
					rules = append(rules, newRuleJSON(r))
				}
				return writeIndentedJSON(out, rules)
			case "markdown":
				_, err := fmt.Fprint(out, cat.Markdown(nil))
				return err
			case "text":
				tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tKIND\tDEFAULT\tNEEDS\tFIXABLE")
				for _, r := range cat.Rules() {
					var needs []string
					for _, n := range r.Needs {
						needs = append(needs, string(n))
					}
					n := strings.Join(needs, ",")
					if n == "" {
						n = "-"
					}
					kind := r.KindLabel(",")
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%v\n", r.ID, kind, r.DefaultAction, n, r.Fixable)
				}
				return tw.Flush()
			}
			return fmt.Errorf("unknown output %q: expected text, json or markdown", g.output)
		},
	}
}

func writeIndentedJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// describeRules prints the documentation of the rules ids names, after checking that each exists: an
// unknown ID prints nothing and fails the run (exit 2), naming the IDs nearest to it.
func describeRules(w io.Writer, cat *validators.Catalog, ids []string, output string) error {
	var found []*validators.Rule
	var unknown []string
	for _, id := range ids {
		r := cat.Rule(id)
		if r == nil {
			unknown = append(unknown, fmt.Sprintf("unknown rule %q: did you mean %s? (`karpenter-guard rules` lists them all)",
				id, strings.Join(nearestIDs(cat.IDs(), id, 3), ", ")))
			continue
		}
		found = append(found, r)
	}
	if len(unknown) > 0 {
		// One "error: " line per unknown ID, as run prints the first.
		return errors.New(strings.Join(unknown, "\nerror: "))
	}
	switch output {
	case "json":
		if len(found) == 1 {
			return writeIndentedJSON(w, newRuleJSON(found[0]))
		}
		docs := make([]ruleJSON, 0, len(found))
		for _, r := range found {
			docs = append(docs, newRuleJSON(r))
		}
		return writeIndentedJSON(w, docs)
	case "text":
		for i, r := range found {
			if i > 0 {
				fmt.Fprintln(w)
			}
			writeRuleDoc(w, r)
		}
		return nil
	}
	return fmt.Errorf("unknown output %q for rules with IDs: expected text or json (markdown lists the whole catalog: leave the IDs out)", output)
}

// writeRuleDoc prints one rule's documentation. The paragraph of documentation is one line, which the
// terminal wraps at its own width.
func writeRuleDoc(w io.Writer, r *validators.Rule) {
	fmt.Fprintf(w, "%s: %s\n\n", r.ID, r.Summary)
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	fmt.Fprintf(tw, "  applies to:\t%s\n", strings.Join(r.Kinds, ", "))
	fmt.Fprintf(tw, "  runs in:\t%s\n", scopeText(r.Scope))
	fmt.Fprintf(tw, "  default action:\t%s\n", r.DefaultAction)
	fmt.Fprintf(tw, "  facts:\t%s\n", factsText(r))
	fmt.Fprintf(tw, "  fixable:\t%s\n", fixableText(r))
	_ = tw.Flush() // writes to w, whose errors the caller's writer reports
	fmt.Fprintf(w, "\n%s\n\n", r.Doc)
	if r.Fixable {
		fmt.Fprintln(w, "fix: each finding gives the exact YAML or command, with the real values; `karpenter-guard check --fix` writes it.")
	} else {
		fmt.Fprintln(w, "fix: each finding gives the exact YAML or command to write by hand, with the real values.")
	}
	fmt.Fprintf(w, "action: a GuardConfig changes it with `rules: {%s: deny|warn|audit|off}`.\n", r.ID)
	if slices.Contains(r.Kinds, validators.KindAny) {
		fmt.Fprintln(w, "skip: it judges the skip annotations themselves, so no object can skip it.")
		return
	}
	fmt.Fprintf(w, "skip: on one object, annotate `karpenter-guard.io/skip: %s` with a `karpenter-guard.io/skip-reason`.\n", r.ID)
}

func scopeText(s validators.Scope) string {
	switch s {
	case validators.ScopeCLI:
		return "check only (it reads raw manifests, which the API server prunes or refuses)"
	case validators.ScopeAdmission:
		return "the webhook only (it judges a change to a stored object)"
	case validators.ScopeCLIAndAudit:
		return "check and the audit (the API server makes this check on admission)"
	}
	return "check, the webhook and the audit"
}

func factsText(r *validators.Rule) string {
	if len(r.Needs) == 0 && len(r.MayNeed) == 0 {
		return "none: the manifest alone decides"
	}
	var parts []string
	if len(r.Needs) > 0 {
		var needs []string
		for _, n := range r.Needs {
			needs = append(needs, string(n))
		}
		parts = append(parts, strings.Join(needs, ", "))
	}
	if len(r.MayNeed) > 0 {
		var may []string
		for _, n := range r.MayNeed {
			may = append(may, string(n))
		}
		parts = append(parts, "in some cases "+strings.Join(may, ", "))
	}
	return strings.Join(parts, "; ") + " (from a ClusterFacts snapshot or --live; not evaluated without them)"
}

func fixableText(r *validators.Rule) string {
	if r.Fixable {
		return "yes: `check --fix` writes the fix, and the mutating webhook applies it where it is safe"
	}
	return "no"
}

// nearestIDs returns the n rule IDs closest to id: those that contain it or are contained in it first,
// then by edit distance, ties in catalog order.
func nearestIDs(ids []string, id string, n int) []string {
	type candidate struct {
		id       string
		contains bool
		distance int
	}
	cands := make([]candidate, 0, len(ids))
	for _, c := range ids {
		cands = append(cands, candidate{c, id != "" && (strings.Contains(c, id) || strings.Contains(id, c)), levenshtein.ComputeDistance(id, c)})
	}
	slices.SortStableFunc(cands, func(a, b candidate) int {
		if a.contains != b.contains {
			if a.contains {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.distance, b.distance)
	})
	out := make([]string, 0, n)
	for _, c := range cands[:min(n, len(cands))] {
		out = append(out, c.id)
	}
	return out
}
