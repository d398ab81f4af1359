package webhook

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// budget is the context a review is evaluated in: the request's values but not its cancellation (a
// server shutting down cancels the contexts of requests in flight, which must still be answered in
// full), and the aws.timeout deadline. It arms a timer only when something waits on it (Done):
// most reviews are answered from caches and snapshots and never wait, and arming and stopping a
// timer per review was a tenth of what the review's context and facts cost.
//
// Written here because the context package has no deadline that is armed on demand.
type budget struct {
	parent   context.Context // context.WithoutCancel of the request's: its values, not its cancellation or cause
	deadline time.Time

	once  sync.Once
	state atomic.Int32 // idle, armed or released (before anything waited)
	// timed and cancel are set when the budget is armed.
	timed  context.Context
	cancel context.CancelFunc
	// releasedErr is what Err says once released without arming.
	releasedErr error
}

const (
	budgetIdle int32 = iota
	budgetArmed
	budgetReleased
)

func newBudget(parent context.Context, d time.Duration) *budget {
	return &budget{parent: context.WithoutCancel(parent), deadline: time.Now().Add(d)}
}

// arm returns the timed context, creating it on first use; nil once released without arming.
func (b *budget) arm() context.Context {
	b.once.Do(func() {
		b.timed, b.cancel = context.WithDeadline(b.parent, b.deadline)
		b.state.Store(budgetArmed)
	})
	return b.timed
}

// Deadline implements context.Context.
func (b *budget) Deadline() (time.Time, bool) { return b.deadline, true }

// Done implements context.Context; it arms the timer.
func (b *budget) Done() <-chan struct{} {
	if t := b.arm(); t != nil {
		return t.Done()
	}
	closed := make(chan struct{}) // released before anything waited: done already
	close(closed)
	return closed
}

// Err implements context.Context. Before anything waits, the deadline alone decides; once past it,
// Err stays DeadlineExceeded whether or not the timer has fired.
func (b *budget) Err() error {
	switch b.state.Load() {
	case budgetReleased:
		return b.releasedErr
	case budgetArmed:
		if err := b.timed.Err(); err != nil {
			return err
		}
	}
	if time.Now().Before(b.deadline) {
		return nil
	}
	return context.DeadlineExceeded
}

// Value implements context.Context.
func (b *budget) Value(key any) any { return b.parent.Value(key) }

// release ends the budget once the review is answered, as the cancel of context.WithTimeout does:
// a timer armed is stopped, and Err reports Canceled from then on (or DeadlineExceeded, if that
// came first).
func (b *budget) release() {
	b.once.Do(func() {
		b.releasedErr = context.Canceled
		if !time.Now().Before(b.deadline) {
			b.releasedErr = context.DeadlineExceeded
		}
		b.state.Store(budgetReleased)
	})
	if b.state.Load() == budgetArmed {
		b.cancel()
	}
}
