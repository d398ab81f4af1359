package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

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

func newRulesCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "rules",
		Short: "List the rule catalog: ID, default action, needed facts, fixable",
		Long:  "List the rule catalog. -o text (a table), json (with each rule's documentation) or markdown (the README table).",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cat := rules.Default()
			out := cmd.OutOrStdout()
			switch g.output {
			case "json":
				var rules []ruleJSON
				for _, r := range cat.Rules() {
					needs := []string{}
					for _, n := range r.Needs {
						needs = append(needs, string(n))
					}
					var may []string
					for _, n := range r.MayNeed {
						may = append(may, string(n))
					}
					rules = append(rules, ruleJSON{ID: r.ID, Kinds: r.Kinds, DefaultAction: string(r.DefaultAction), Needs: needs, MayNeed: may,
						Fixable: r.Fixable, Scope: string(r.Scope), Summary: r.Summary, Doc: r.Doc})
				}
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				enc.SetEscapeHTML(false)
				return enc.Encode(rules)
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
