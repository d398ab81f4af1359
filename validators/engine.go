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
// in rounds on what the provider has at hand (facts.AtHandOnly): a question not at hand starts its
// fetch without waiting and the run goes on, so that one round starts every independent question of
// its level. The objects judged on answers all at hand have their verdicts; the engine waits for the
// fetches it started and runs the others again, which finds the next level of dependent questions (an
// instance profile's role, then the role's access entry, then its simulations). When every answer is
// cached, as for most admission reviews, the first round is the result. An evaluation thus costs about
// one round trip per level of dependent questions, and asks each question where a rule asks it, once.
// Every wait is bounded by c's deadline and the provider's own per-call budget: a question whose wait
// ended is answered as late in the rounds that follow (facts.GaveUp), and holds none of them up. The
// objects still missing answers when the rounds stop (the deadline, maxRounds, a provider that starts
// no fetch) are judged by a last run that asks as the rules go: past the deadline it asks nothing, and
// reports what has no answer as not evaluated, never as passed.
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
	c.eval = &evaluation{catalog: cat, passRoom: c.MaxPassed}
	verdicts := make([]objectVerdict, len(objs))
	pending := make([]int, len(objs))
	for i := range pending {
		pending[i] = i
	}
	if facts.AsksAhead(c.Facts) {
		pending = cat.evaluateAtHand(c, objs, verdicts)
	}
	if len(pending) > 0 {
		judged := make([]*objects.Object, len(pending))
		for j, i := range pending {
			judged[j] = objs[i]
		}
		c.startRun(judged)
		done := len(objs) - len(pending)
		for j, i := range pending {
			if c.Progress != nil && done+j > 0 {
				c.Progress(done+j, len(objs))
			}
			verdicts[i] = cat.judge(c, objs[i])
		}
	}
	if c.Progress != nil {
		c.Progress(len(objs), len(objs))
	}
	res := merge(verdicts)
	res.Notes = notes.List()
	return res
}

// maxRounds bounds the runs on what is at hand: the rules ask a handful of levels of dependent
// questions, a round starts once the answers of a level are in but for the slowest (facts.Round.Wait),
// and a cache too small to keep a round's answers until the next must not make the rounds go on for
// ever.
const maxRounds = 32

// evaluateAtHand runs the rules in rounds on what c.Facts has at hand (see Evaluate), keeps in
// verdicts those of the objects judged on answers all at hand, and returns the positions of the others.
func (cat *Catalog) evaluateAtHand(c *Context, objs []*objects.Object, verdicts []objectVerdict) []int {
	ctx := c.Context
	defer func() { c.Context, c.eval.round = ctx, nil }()
	pending := make([]int, len(objs))
	for i := range pending {
		pending[i] = i
	}
	hctx, round := facts.AtHandOnly(ctx)
	for n := 1; len(pending) > 0; n++ {
		if n > 1 {
			hctx, round = round.Next()
		}
		c.eval.round = round
		judged := make([]*objects.Object, len(pending))
		for j, i := range pending {
			judged[j] = objs[i]
		}
		c.startRun(judged)
		var missed []int
		for _, i := range pending {
			// An object's notes count only with its verdict: a run that missed an answer is run again.
			objNotes := &facts.Notes{}
			c.Context = facts.WithNotes(hctx, objNotes)
			before := c.misses()
			v := cat.judge(c, objs[i])
			if c.misses() != before || v.notAtHand {
				c.eval.passRoom += len(v.passed) // thrown away: its passes are not listed
				missed = append(missed, i)
				continue
			}
			verdicts[i] = v
			for _, note := range objNotes.List() {
				facts.Note(ctx, note)
			}
		}
		c.Context = ctx
		pending = missed
		if c.Progress != nil && len(pending) > 0 {
			c.Progress(len(objs)-len(pending), len(objs))
		}
		if len(pending) == 0 || n == maxRounds || !round.Fetching() {
			break
		}
		if round.Wait(); ctx.Err() != nil {
			break
		}
	}
	return pending
}

// objectVerdict is what the rules said of one object.
type objectVerdict struct {
	judged       bool
	findings     []Finding
	notEvaluated []NotEvaluated
	skipped      []Skipped
	// passed lists the rules that found nothing, as many as the evaluation still lists (see
	// evaluation.passRoom); passedCount counts them all.
	passed      []Passed
	passedCount int
	// notAtHand is set when a rule was not evaluated for want of an answer not at hand (AtHandOnly):
	// the verdict is to be thrown away.
	notAtHand bool
}

// merge puts the verdicts together in the order of the objects.
func merge(verdicts []objectVerdict) Result {
	var res Result
	// Sized first: appending 10,000 objects' verdicts one by one copied the slices over and over.
	var findings, notEvaluated, skipped, passed int
	for _, v := range verdicts {
		findings += len(v.findings)
		notEvaluated += len(v.notEvaluated)
		skipped += len(v.skipped)
		passed += len(v.passed)
	}
	// Nil stays nil where there is nothing, as before (JSON writes it as null).
	if findings > 0 {
		res.Findings = make([]Finding, 0, findings)
	}
	if notEvaluated > 0 {
		res.NotEvaluated = make([]NotEvaluated, 0, notEvaluated)
	}
	if skipped > 0 {
		res.Skipped = make([]Skipped, 0, skipped)
	}
	if passed > 0 {
		res.Passed = make([]Passed, 0, passed)
	}
	for _, v := range verdicts {
		if v.judged {
			res.Objects++
		}
		res.Findings = append(res.Findings, v.findings...)
		res.NotEvaluated = append(res.NotEvaluated, v.notEvaluated...)
		res.Skipped = append(res.Skipped, v.skipped...)
		res.Passed = append(res.Passed, v.passed...)
		res.PassedCount += v.passedCount
	}
	SortFindings(res.Findings)
	return res
}

// judge runs the rules that apply to o.
func (cat *Catalog) judge(c *Context, o *objects.Object) objectVerdict {
	var v objectVerdict
	kind := KindOf(o)
	if kind == "" {
		return v
	}
	v.judged = true
	ex := ExceptionOf(o)
	for _, ri := range cat.rulesFor(kind, c.Scope) {
		r := cat.rules[ri]
		action, runs := r.runsIn(c)
		if !runs {
			continue
		}
		if r.Kinds[0] != KindAny && ex.Skips(r.ID) {
			v.skipped = append(v.skipped, Skipped{Rule: r.ID, Object: o.Ref(), Reason: ex.describe()})
			continue
		}
		if missing := missingFacts(c, ri, r); missing.reason != "" {
			v.notAtHand = v.notAtHand || missing.notAtHand
			v.notEvaluated = append(v.notEvaluated, NotEvaluated{Rule: r.ID, Object: o.Ref(), Reason: missing.reason, Causes: missing.causes})
			continue
		}
		if r.Check == nil {
			v.notEvaluated = append(v.notEvaluated, NotEvaluated{Rule: r.ID, Object: o.Ref(), Reason: "not implemented in this build", Causes: []string{"not implemented in this build"}})
			continue
		}
		findings, err := r.Check(c, o)
		if err != nil {
			// An unknown fact, or a programming error in the rule (see Rule.Check): either way the
			// rule did not judge the object, or (PartlyEvaluated) only what it found.
			v.notAtHand = v.notAtHand || errors.Is(err, facts.ErrNotAtHand)
			v.notEvaluated = append(v.notEvaluated, NotEvaluated{Rule: r.ID, Object: o.Ref(), Reason: err.Error(), Causes: []string{facts.Reason(err)}})
			if partly := (*PartlyEvaluated)(nil); !errors.As(err, &partly) {
				continue
			}
		}
		if err == nil && len(findings) == 0 {
			v.passedCount++
			if c.eval.passRoom > 0 {
				c.eval.passRoom--
				v.passed = append(v.passed, Passed{Rule: r.ID, Object: o.Ref()})
			}
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
			v.findings = append(v.findings, f)
		}
	}
	return v
}

// startRun empties what a run over objects remembers: a run on what is at hand remembers answers that
// were not.
func (c *Context) startRun(judged []*objects.Object) {
	st := c.eval
	st.unknown = [len(st.unknown)]factAnswer{}
	clear(st.memos)
	st.nodeClasses = nil
	st.judged = judged
	st.tainted = 0
}

// misses counts, in a run on what is at hand, the questions that had no answer at hand so far, and
// the uses of a remembered result (Memo, a fact's reason) computed from such an answer: an object
// whose evaluation changed it was judged on answers not at hand.
func (c *Context) misses() int64 {
	st := c.state()
	if st.round == nil {
		return 0
	}
	return st.round.Misses() + st.tainted
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
	// notAtHand is set when a fact is unknown because its answer was not at hand (AtHandOnly).
	notAtHand bool
}

// factAnswer is whether the provider was asked about one of the catalog's facts in this evaluation,
// and why the fact is unknown ("" when it is known).
type factAnswer struct {
	asked bool
	why   string
	// missed is set when asking had no answer at hand (see Context.misses).
	missed bool
}

// missingFacts names the facts rule number ri of the catalog needs that the provider does not know.
// Each fact is asked once per Evaluate (unknownReason), and the wording once per change of the
// provider's reasons (composeMissing).
func missingFacts(c *Context, ri int, r *Rule) missing {
	// A rule needs a handful of facts: a small array beats a map here.
	var buf [8]string
	whys := buf[:0]
	unknown := false
	for _, fi := range c.eval.catalog.needs[ri] {
		why := c.unknownReason(fi)
		whys = append(whys, why)
		unknown = unknown || why != ""
	}
	if !unknown {
		return missing{}
	}
	m := c.eval.catalog.composeMissing(ri, r, whys)
	m.notAtHand = slices.Contains(whys, facts.Reason(facts.ErrNotAtHand))
	return m
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
	st := c.eval
	if a := st.unknown[fi]; a.asked {
		if a.missed {
			st.tainted++
		}
		return a.why
	}
	why := ""
	before := c.misses()
	if err := c.Facts.Known(c, st.catalog.facts[fi]); err != nil {
		why = facts.Reason(err)
	}
	st.unknown[fi] = factAnswer{asked: true, why: why, missed: c.misses() != before}
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
