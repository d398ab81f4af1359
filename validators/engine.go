package validators

import (
	"context"
	"slices"
	"sort"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
)

// Result is the outcome of evaluating the catalog over a set of objects.
type Result struct {
	Findings     []Finding
	NotEvaluated []NotEvaluated
	Skipped      []Skipped
	// Objects counts the objects evaluated.
	Objects int
	// Notes are what the facts provider said about its answers (a cached answer served because AWS
	// throttled, …): the reader of a verdict should know them.
	Notes []string
}

// Evaluate runs every applicable rule over objs. c.Input should hold every object the rules may look
// up (usually objs itself in the CLI).
func (cat *Catalog) Evaluate(c *Context, objs []*objects.Object) Result {
	if c.Config == nil {
		c.Config = config.Default()
	}
	if c.Facts == nil {
		c.Facts = facts.None{}
	}
	if c.Context == nil {
		c.Context = context.Background()
	}
	notes := facts.NotesFrom(c)
	if notes == nil {
		notes = &facts.Notes{}
		c.Context = facts.WithNotes(c.Context, notes)
	}
	c.catalog = cat
	c.unknown = map[facts.Fact]string{}
	c.missing = map[*Rule]missing{}
	c.userData = map[*objects.Object]parsedUserData{}
	c.nodeClasses = nil
	c.auth = map[*objects.Object]authResult{}
	c.terms = map[string]termResult{}
	c.subnets = map[*objects.Object]selection{}
	c.groups = map[*objects.Object]selection{}
	var res Result
	for i, o := range objs {
		if c.Progress != nil && i > 0 {
			c.Progress(i, len(objs))
		}
		kind := kindOf(o)
		if kind == "" {
			continue
		}
		res.Objects++
		ex := parseException(o)
		for _, r := range cat.rules {
			if !r.AppliesTo(kind) {
				continue
			}
			if r.Scope != ScopeAll && r.Scope != c.Scope {
				continue
			}
			if len(r.Operations) > 0 && !slices.Contains(r.Operations, c.Operation) {
				continue
			}
			action := c.Config.ActionFor(r.ID, r.DefaultAction)
			if action == config.ActionOff || (r.Enabled != nil && !r.Enabled(c.Config)) {
				continue
			}
			if r.Kinds[0] != KindAny && ex.rules[r.ID] {
				res.Skipped = append(res.Skipped, Skipped{Rule: r.ID, Object: o.Ref(), Reason: ex.describe()})
				continue
			}
			if missing := missingFacts(c, r); missing.reason != "" {
				res.NotEvaluated = append(res.NotEvaluated, NotEvaluated{Rule: r.ID, Object: o.Ref(), Reason: missing.reason, Causes: missing.causes})
				continue
			}
			if r.Check == nil {
				res.NotEvaluated = append(res.NotEvaluated, NotEvaluated{Rule: r.ID, Object: o.Ref(), Reason: "not implemented in this build", Causes: []string{"not implemented in this build"}})
				continue
			}
			c.gaveUp = nil
			findings := r.Check(c, o)
			if c.gaveUp != nil {
				res.NotEvaluated = append(res.NotEvaluated, NotEvaluated{Rule: r.ID, Object: o.Ref(), Reason: c.gaveUp.Error(), Causes: []string{facts.Reason(c.gaveUp)}})
			}
			for _, f := range findings {
				f.Rule = r.ID
				f.Action = action
				f.Object = o.Ref()
				f.Source = o
				f.Fixable = len(f.Edits) > 0
				if f.Line == 0 {
					f.Line = f.Object.Line
				}
				res.Findings = append(res.Findings, f)
			}
		}
	}
	if c.Progress != nil {
		c.Progress(len(objs), len(objs))
	}
	SortFindings(res.Findings)
	res.Notes = notes.List()
	return res
}

// SortFindings orders findings by file, object, line and rule: the order people read them in.
func SortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.Object.File != b.Object.File {
			return a.Object.File < b.Object.File
		}
		if a.Object.Line != b.Object.Line {
			return a.Object.Line < b.Object.Line
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Rule < b.Rule
	})
}

// missing is why a rule cannot run: "reason: fact, fact; reason: fact", and the reasons alone.
type missing struct {
	reason string
	causes []string
}

// missingFacts names the facts a rule needs that the provider does not know.
// Answers are memoised for the duration of one Evaluate: facts do not change between objects.
func missingFacts(c *Context, r *Rule) missing {
	if len(r.Needs) == 0 {
		return missing{}
	}
	if m, ok := c.missing[r]; ok {
		return m
	}
	byReason := map[string][]string{}
	var reasons []string
	for _, f := range r.Needs {
		why, ok := c.unknown[f]
		if !ok {
			why = ""
			if err := c.Facts.Known(c, f); err != nil {
				why = facts.Reason(err)
			}
			c.unknown[f] = why
		}
		if why != "" {
			if _, seen := byReason[why]; !seen {
				reasons = append(reasons, why)
			}
			byReason[why] = append(byReason[why], string(f))
		}
	}
	parts := make([]string, len(reasons))
	for i, why := range reasons {
		parts[i] = why + ": " + strings.Join(byReason[why], ", ")
	}
	m := missing{reason: strings.Join(parts, "; "), causes: reasons}
	c.missing[r] = m
	return m
}

// Counts tallies findings by action.
func (r Result) Counts() map[config.Action]int {
	m := map[config.Action]int{}
	for _, f := range r.Findings {
		m[f.Action]++
	}
	return m
}
