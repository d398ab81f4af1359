package facts

import (
	"context"
	"sync/atomic"
)

// CallBudget bounds the requests one audit may send to a rate-limited source (AWS): each request
// takes one call from it, and a request that finds it spent is not sent. It is carried in the
// audit's context (WithCallBudget) to the providers' fetches, even those that run detached from the
// caller. Safe for concurrent use.
type CallBudget struct {
	limit int64
	used  atomic.Int64
}

// NewCallBudget returns a budget of limit calls.
func NewCallBudget(limit int) *CallBudget { return &CallBudget{limit: int64(limit)} }

// Take takes one call from the budget, and reports whether there was one left.
func (b *CallBudget) Take() bool {
	if b.used.Add(1) <= b.limit {
		return true
	}
	b.used.Add(-1)
	return false
}

// Refund gives back a call taken for a request that was not sent after all.
func (b *CallBudget) Refund() { b.used.Add(-1) }

// Limit is the number of calls the budget allows.
func (b *CallBudget) Limit() int { return int(b.limit) }

// Used is the number of calls taken so far.
func (b *CallBudget) Used() int { return int(b.used.Load()) }

type callBudgetKey struct{}

// WithCallBudget returns ctx carrying b: every request to AWS made for ctx is charged to b.
func WithCallBudget(ctx context.Context, b *CallBudget) context.Context {
	return context.WithValue(ctx, callBudgetKey{}, b)
}

// CallBudgetFrom returns the budget ctx carries, or nil (an admission review, a CLI run: not
// bounded by a budget).
func CallBudgetFrom(ctx context.Context) *CallBudget {
	b, _ := ctx.Value(callBudgetKey{}).(*CallBudget)
	return b
}
