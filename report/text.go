package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/internal/wording"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

// TextOptions controls the text output.
type TextOptions struct {
	// Color adds ANSI colours (only on a terminal).
	Color bool
	// Quiet prints only deny findings and input errors.
	Quiet bool
}

const (
	red    = "\x1b[31m"
	yellow = "\x1b[33m"
	cyan   = "\x1b[36m"
	bold   = "\x1b[1m"
	dim    = "\x1b[2m"
	reset  = "\x1b[0m"
)

// WriteText writes the report for people: input errors first, then findings grouped by object with
// file:line, message and fix, then one summary line.
func (r *Report) WriteText(w io.Writer, opt TextOptions) error {
	p := &printer{w: w, color: opt.Color}
	for _, e := range r.Errors {
		p.printf("%s %s\n", p.paint(red+bold, "error:"), e.Error())
	}
	if len(r.Errors) > 0 {
		p.printf("\n")
	}
	type group struct {
		ref      objects.Ref
		findings []validators.Finding
		notEval  []validators.NotEvaluated
		skipped  []validators.Skipped
	}
	var order []string
	groups := map[string]*group{}
	get := func(ref objects.Ref) *group {
		k := fmt.Sprintf("%s\x00%08d\x00%s\x00%s", ref.File, ref.Line, ref.Kind, ref.Name)
		g, ok := groups[k]
		if !ok {
			g = &group{ref: ref}
			groups[k] = g
			order = append(order, k)
		}
		return g
	}
	for _, f := range r.Findings {
		if opt.Quiet && f.Action != config.ActionDeny {
			continue
		}
		get(f.Object).findings = append(get(f.Object).findings, f)
	}
	if !opt.Quiet {
		for _, n := range r.NotEvaluated {
			get(n.Object).notEval = append(get(n.Object).notEval, n)
		}
		for _, s := range r.Skipped {
			get(s.Object).skipped = append(get(s.Object).skipped, s)
		}
	}
	sort.Strings(order)
	for _, k := range order {
		g := groups[k]
		loc := g.ref.File
		if g.ref.Line > 0 {
			loc = fmt.Sprintf("%s:%d", g.ref.File, g.ref.Line)
		}
		p.printf("%s %s\n", p.paint(bold, g.ref.String()), p.paint(dim, "("+loc+")"))
		for _, f := range g.findings {
			label := strings.ToUpper(string(f.Action))
			switch f.Action {
			case config.ActionDeny:
				label = p.paint(red+bold, label)
			case config.ActionWarn:
				label = p.paint(yellow+bold, label)
			default:
				label = p.paint(cyan, label)
			}
			p.printf("  %s [%s] %s:%d %s\n", label, f.Rule, g.ref.File, f.Line, f.Field)
			p.printf("      %s\n", f.Message)
			if f.Fix != "" {
				fixable := ""
				if f.Fixable {
					fixable = p.paint(dim, " (--fix applies it)")
				}
				p.printf("      fix: %s%s\n", indentRest(f.Fix, "           "), fixable)
			}
		}
		for _, s := range g.skipped {
			p.printf("  %s [%s] %s\n", p.paint(dim, "SKIP"), s.Rule, s.Reason)
		}
		if len(g.notEval) > 0 {
			p.printf("  %s\n", p.paint(dim, wording.Plural(len(g.notEval), "check", "checks")+" not evaluated: "+notEvalReasons(g.notEval)))
		}
		p.printf("\n")
	}
	if !opt.Quiet && len(r.NotEvaluated) > 0 {
		// One paragraph per cause, naming the rules it silenced: "AWS denied iam:GetRole …" tells an
		// operator which permission costs which checks.
		for _, g := range validators.GroupByCause(r.NotEvaluated) {
			heading := "Not evaluated because " + g.Cause + ":"
			if g.Cause == "no facts" {
				// The only place that says how to get facts: once per run, not once per object.
				heading = "Not evaluated for want of facts (keep a ClusterFacts snapshot in .karpenter-guard/cluster-facts.yaml beside the manifests, or pass --facts FILE; " +
					"karpenter-guard facts export writes one, and check --live asks AWS and the cluster directly):"
			}
			p.printf("%s\n  %s\n\n", p.paint(bold, heading), strings.Join(g.Rules, ", "))
		}
	}
	if !opt.Quiet {
		for _, n := range r.Notes {
			p.printf("%s %s\n", p.paint(dim, "note:"), n)
		}
	}
	if !opt.Quiet || len(r.Errors) > 0 || r.Summary.Deny > 0 || r.Summary.NothingChecked != "" {
		line := r.summaryLine()
		if r.emptyFails() {
			line = p.paint(red+bold, line)
		}
		p.printf("%s\n", line)
	}
	return p.err
}

// notEvalReasons summarises why checks were not evaluated ("no facts", "AWS throttled ec2:DescribeImages").
func notEvalReasons(ns []validators.NotEvaluated) string {
	var reasons []string
	for _, g := range validators.GroupByCause(ns) {
		reasons = append(reasons, g.Cause)
	}
	return strings.Join(reasons, "; ")
}

func (r *Report) summaryLine() string {
	s := r.Summary
	if s.NothingChecked != "" {
		return nothingCheckedLine(r)
	}
	parts := []string{
		wording.Plural(s.Deny, "deny", "deny"),
		wording.Plural(s.Warn, "warning", "warnings"),
	}
	if s.Audit > 0 {
		parts = append(parts, wording.Plural(s.Audit, "audit finding", "audit findings"))
	}
	parts = append(parts,
		wording.Plural(s.NotEvaluated, "check not evaluated", "checks not evaluated"),
		wording.Plural(s.Skipped, "skipped", "skipped"),
		wording.Plural(s.Errors, "input error", "input errors"))
	line := fmt.Sprintf("%s checked", wording.Plural(s.Objects, "object", "objects"))
	var aside []string
	if s.Ignored > 0 {
		aside = append(aside, fmt.Sprintf("%d of other kinds ignored", s.Ignored))
	}
	if s.NotObjects > 0 {
		aside = append(aside, wording.Plural(s.NotObjects, "document that is not a Kubernetes object", "documents that are not Kubernetes objects")+" skipped")
	}
	if s.Excluded > 0 {
		aside = append(aside, wording.Plural(s.Excluded, "path", "paths")+" excluded")
	}
	if s.Rendered > 0 {
		aside = append(aside, wording.Plural(s.Rendered, "kustomization", "kustomizations")+" rendered")
	}
	if s.Unread > 0 {
		aside = append(aside, wording.Plural(s.Unread, "path", "paths")+" not read")
	}
	if len(aside) > 0 {
		line += " (" + strings.Join(aside, "; ") + ")"
	}
	line += ": " + strings.Join(parts, ", ")
	if s.Fixed > 0 {
		line += fmt.Sprintf("; %s fixed", wording.Plural(s.Fixed, "finding", "findings"))
	}
	return line
}

// nothingCheckedLine is the summary of a run that checked nothing: the reason, and what it makes of
// the run.
func nothingCheckedLine(r *Report) string {
	line := "nothing checked: " + r.Summary.NothingChecked
	if r.emptyFails() {
		line += " (--fail-on-empty: the run fails, exit 2)"
	}
	return line
}

func indentRest(s, indent string) string {
	return strings.ReplaceAll(s, "\n", "\n"+indent)
}

type printer struct {
	w     io.Writer
	color bool
	err   error
}

func (p *printer) printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

func (p *printer) paint(code, s string) string {
	if !p.color {
		return s
	}
	return code + s + reset
}
