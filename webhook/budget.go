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
	parent   context.Context // whose values the budget has; its cancellation is ignored
	deadline time.Time

	once   sync.Once
	armed  atomic.Bool
	timed  context.Context // set by arm, with cancel
	cancel context.CancelFunc
}

func newBudget(parent context.Context, d time.Duration) *budget {
	return &budget{parent: parent, deadline: time.Now().Add(d)}
}

// arm returns the timed context, creating it on first use.
func (b *budget) arm() context.Context {
	b.once.Do(func() {
		b.timed, b.cancel = context.WithDeadline(context.WithoutCancel(b.parent), b.deadline)
		b.armed.Store(true)
	})
	return b.timed
}

// Deadline implements context.Context.
func (b *budget) Deadline() (time.Time, bool) { return b.deadline, true }

// Done implements context.Context; it arms the timer.
func (b *budget) Done() <-chan struct{} { return b.arm().Done() }

// Err implements context.Context: before anything waits, the deadline alone decides.
func (b *budget) Err() error {
	if b.armed.Load() {
		return b.arm().Err()
	}
	if time.Now().Before(b.deadline) {
		return nil
	}
	return context.DeadlineExceeded
}

// Value implements context.Context.
func (b *budget) Value(key any) any { return b.parent.Value(key) }

// release ends the budget once the review is answered, stopping its timer if one was armed. Nothing
// may wait on it after that.
func (b *budget) release() {
	if b.armed.Load() {
		b.cancel()
	}
}
