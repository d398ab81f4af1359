package validators

import (
	"context"
	"errors"
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
	// Passed are the rules that ran on an object and found nothing, up to Context.MaxPassed of them;
	// PassedCount counts them all.
	Passed      []Passed
	PassedCount int
	// Objects counts the objects evaluated.
	Objects int
	// Notes are what the facts provider said about its answers (a cached answer served because AWS
	// throttled, …): the reader of a verdict should know them.
	Notes []string
}

// Evaluate runs every applicable rule over objs. c.Input should hold every object the rules may look
// up (usually objs itself in the CLI).
//
// With a provider whose answers cost a round trip (facts.AsksAhead: the live provider), the rules run
// first on what the provider has at hand (facts.AtHandOnly): when every answer is cached, as for most
// admission reviews, that is the result, and nothing more is done. At the first answer not at hand
// that run stops, the questions the rules will ask are asked ahead, concurrently (AskAheadFunc), and the
// rules run again on the answers: an evaluation then costs about one round trip per level of dependent
// questions instead of the sum of its calls. Every wait is bounded by c's deadline and the provider's
// own per-call budget. A catalog without an AskAheadFunc (WithAskAhead) runs again without asking
// ahead: the rules then ask one question at a time.
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
	if facts.AsksAhead(c.Facts) {
		// The run on what is at hand keeps its notes (and reports no progress) until it is known to
		// be the result.
		ctx, progress := c.Context, c.Progress
		atHand, missed := facts.AtHandOnly(ctx)
		cached := &facts.Notes{}
		c.Context, c.Progress = facts.WithNotes(atHand, cached), nil
		res, complete := cat.evaluate(c, objs, missed)
		c.Context, c.Progress = ctx, progress
		if complete {
			for _, n := range cached.List() {
				facts.Note(ctx, n)
			}
			if progress != nil {
				progress(len(objs), len(objs))
			}
			res.Notes = notes.List()
			return res
		}
		if cat.askAhead != nil {
			cat.askAhead(cat, c, objs)
		}
	}
	res, _ := cat.evaluate(c, objs, nil)
	res.Notes = notes.List()
	return res
}

// evaluate runs the rules over objs once. With missed set, it gives up (false) as soon as missed
// reports a question without an answer at hand: that run's verdicts would be wrong.
func (cat *Catalog) evaluate(c *Context, objs []*objects.Object, missed func() bool) (Result, bool) {
	// Each run starts from nothing: a run on what is at hand remembers answers that were not.
	c.unknown = [len(c.unknown)]factAnswer{}
	clear(c.memos)
	c.nodeClasses = nil
	c.judged = objs
	var res Result
	for i, o := range objs {
		if c.Progress != nil && i > 0 {
			c.Progress(i, len(objs))
		}
		kind := KindOf(o)
		if kind == "" {
			continue
		}
		res.Objects++
		ex := ExceptionOf(o)
		for _, ri := range cat.rulesFor(kind, c.Scope) {
			r := cat.rules[ri]
			action, runs := r.runsIn(c)
			if !runs {
				continue
			}
			if r.Kinds[0] != KindAny && ex.Skips(r.ID) {
				res.Skipped = append(res.Skipped, Skipped{Rule: r.ID, Object: o.Ref(), Reason: ex.describe()})
				continue
			}
			if missing := missingFacts(c, ri, r); missing.reason != "" {
				if missed != nil && missed() {
					return Result{}, false
				}
				res.NotEvaluated = append(res.NotEvaluated, NotEvaluated{Rule: r.ID, Object: o.Ref(), Reason: missing.reason, Causes: missing.causes})
				continue
			}
			if r.Check == nil {
				res.NotEvaluated = append(res.NotEvaluated, NotEvaluated{Rule: r.ID, Object: o.Ref(), Reason: "not implemented in this build", Causes: []string{"not implemented in this build"}})
				continue
			}
			findings, err := r.Check(c, o)
			if missed != nil && missed() {
				return Result{}, false
			}
			if err != nil {
				// An unknown fact, or a programming error in the rule (see Rule.Check): either way the
				// rule did not judge the object, or (PartlyEvaluated) only what it found.
				res.NotEvaluated = append(res.NotEvaluated, NotEvaluated{Rule: r.ID, Object: o.Ref(), Reason: err.Error(), Causes: []string{facts.Reason(err)}})
				if partly := (*PartlyEvaluated)(nil); !errors.As(err, &partly) {
					continue
				}
			}
			if err == nil && len(findings) == 0 {
				if res.PassedCount < c.MaxPassed {
					res.Passed = append(res.Passed, Passed{Rule: r.ID, Object: o.Ref()})
				}
				res.PassedCount++
			}
			for _, f := range findings {
				f.Rule = r.ID
				f.Action = action
				if f.AtMost != "" && strength(f.AtMost) < strength(action) {
					f.Action = f.AtMost
				}
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
	return res, true
}

// runsIn returns the rule's action in c, and whether it runs there at all: not for another operation,
// not when the configuration turns it off.
func (r *Rule) runsIn(c *Context) (config.Action, bool) {
	switch {
	case len(r.Operations) > 0 && !slices.Contains(r.Operations, c.Operation):
		return "", false
	case len(r.Operations) == 0 && c.Operation == OperationDelete:
		// A deletion is judged only by the rules that judge deletions: what the object holds no
		// longer matters once it goes (a malformed aws-auth may always be deleted).
		return "", false
	}
	action := c.Config.ActionFor(r.ID, r.DefaultAction)
	if action == config.ActionOff || (r.Enabled != nil && !r.Enabled(c.Config)) {
		return "", false
	}
	return action, true
}

// strength orders actions: deny, warn, audit, off.
func strength(a config.Action) int {
	switch a {
	case config.ActionDeny:
		return 3
	case config.ActionWarn:
		return 2
	case config.ActionAudit:
		return 1
	}
	return 0
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

// factAnswer is whether the provider was asked about one of the catalog's facts in this evaluation,
// and why the fact is unknown ("" when it is known).
type factAnswer struct {
	asked bool
	why   string
}

// missingFacts names the facts rule number ri of the catalog needs that the provider does not know.
// Each fact is asked once per Evaluate (unknownReason), and the wording once per change of the
// provider's reasons (composeMissing).
func missingFacts(c *Context, ri int, r *Rule) missing {
	// A rule needs a handful of facts: a small array beats a map here.
	var buf [8]string
	whys := buf[:0]
	unknown := false
	for _, fi := range c.catalog.needs[ri] {
		why := c.unknownReason(fi)
		whys = append(whys, why)
		unknown = unknown || why != ""
	}
	if !unknown {
		return missing{}
	}
	return c.catalog.composeMissing(ri, r, whys)
}

// composedMissing is the last reason composed for one rule, with the per-fact reasons it came from.
type composedMissing struct {
	whys []string
	m    missing
}

// composeMissing builds rule ri's "reason: fact, fact" from the reason each of its needed facts is
// unknown (whys[i] for r.Needs[i], "" when known; at least one is unknown). A provider gives the same reasons review after
// review, so the catalog keeps the last composition per rule and reuses it while the reasons match:
// the webhook then builds no strings for rules it cannot evaluate.
func (cat *Catalog) composeMissing(ri int, r *Rule, whys []string) missing {
	if last := cat.missing[ri].Load(); last != nil && slices.Equal(last.whys, whys) {
		return last.m
	}
	var reasons []string
	for _, why := range whys {
		if why != "" && !slices.Contains(reasons, why) {
			reasons = append(reasons, why)
		}
	}
	var b strings.Builder
	for i, why := range reasons {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(why)
		b.WriteString(": ")
		n := 0
		for j, f := range r.Needs {
			if whys[j] == why {
				if n > 0 {
					b.WriteString(", ")
				}
				b.WriteString(string(f))
				n++
			}
		}
	}
	m := missing{reason: b.String(), causes: reasons}
	cat.missing[ri].Store(&composedMissing{whys: slices.Clone(whys), m: m})
	return m
}

// unknownReason returns why the provider does not know the catalog's fact number fi, or "" when it
// does, asking the provider once per evaluation.
func (c *Context) unknownReason(fi int) string {
	if c.unknown[fi].asked {
		return c.unknown[fi].why
	}
	why := ""
	if err := c.Facts.Known(c, c.catalog.facts[fi]); err != nil {
		why = facts.Reason(err)
	}
	c.unknown[fi] = factAnswer{asked: true, why: why}
	return why
}

// Counts tallies findings by action.
func (r Result) Counts() map[config.Action]int {
	m := map[config.Action]int{}
	for _, f := range r.Findings {
		m[f.Action]++
	}
	return m
}
