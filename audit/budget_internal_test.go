package audit

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/go-logr/logr"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts/live/awscall"
	"github.com/karpenter-guard/karpenter-guard/internal/corpus"
	"github.com/karpenter-guard/karpenter-guard/internal/livetest"
	"github.com/karpenter-guard/karpenter-guard/manifest"
	"github.com/karpenter-guard/karpenter-guard/validators/rules"
)

// TestAuditCallBudget: an in-cluster audit of more distinct AWS questions than its budget sends at
// most the budget and reports what it could not ask as not evaluated, naming the spent budget; each
// next audit asks the rest, and the first audit that asks all it needs within the budget has the
// outcome of an audit without a budget.
func TestAuditCallBudget(t *testing.T) {
	const budget = 40
	set := &manifest.Set{}
	for i := 0; i < 20; i++ {
		set.Add(manifest.Source{Path: fmt.Sprintf("class-%d.yaml", i), Data: []byte(corpus.NodeClass(i))})
	}
	objs := &Objects{NodeClasses: set.Objects}
	cf := corpus.WithIdentities(corpus.Facts(20, 10, 20))
	ctx := context.Background()

	// What an audit without a budget finds, and what it costs.
	free := livetest.Start(t, cf, livetest.Options{})
	want := Run(ctx, rules.Default(), config.Default(), free.Provider, objs)
	if cost := free.Fake.Calls("*"); cost <= 3*budget {
		t.Fatalf("the audit costs %d AWS calls; the test needs more than three budgets of %d", cost, budget)
	}

	env := livetest.Start(t, cf, livetest.Options{Pacer: awscall.NewPacer(awscall.PacerOptions{})})
	cfg := config.Default()
	cfg.AWS.AuditCallBudget = budget
	l := &Loop{Catalog: rules.Default(), Config: cfg, Facts: env.Provider, Log: logr.Discard()}
	const spent = "the audit's budget of 40 AWS calls is spent; the next audit asks the rest"
	for cycle := 1; ; cycle++ {
		env.Fake.ResetCalls()
		got := l.evaluate(ctx, objs)
		calls := env.Fake.Calls("*")
		if calls > budget {
			t.Fatalf("audit %d sent %d AWS requests; its budget is %d", cycle, calls, budget)
		}
		unasked := 0
		for _, n := range got.NotEvaluated {
			if strings.Contains(strings.Join(n.Causes, "\n"), spent) {
				unasked++
			}
		}
		if cycle == 1 && (unasked == 0 || !got.Partial) {
			t.Fatalf("the first audit reports nothing unasked (partial %v); want what did not fit not evaluated, naming the budget", got.Partial)
		}
		if calls < budget {
			// Everything asked within the budget: the outcome is whole.
			if g, w := outline(got), outline(want); g != w {
				t.Fatalf("after %d audits:\n%s\nwant, as without a budget:\n%s", cycle, g, w)
			}
			return
		}
		// A rule left without its answers is never reported as passed or failed for it.
		for _, f := range got.Findings {
			if strings.Contains(f.Message, "budget") {
				t.Fatalf("a finding about the budget: %+v", f)
			}
		}
		if cycle > 30 {
			t.Fatalf("audit %d still spent its budget (%d checks unasked): no progress", cycle, unasked)
		}
	}
}

// outline is the findings and the checks not evaluated of an audit, one per line, sorted.
func outline(o *Outcome) string {
	var lines []string
	for _, f := range o.Findings {
		lines = append(lines, "finding "+f.Object.Name+" "+f.Rule+": "+f.Message)
	}
	for _, n := range o.NotEvaluated {
		lines = append(lines, "not evaluated "+n.Object.Name+" "+n.Rule+": "+strings.Join(n.Causes, "; "))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
