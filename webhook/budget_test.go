package webhook

import (
	"context"
	"errors"
	"testing"
	"time"
)

type budgetKey struct{}

// TestBudget: a review's context has the request's values, outlives the request's cancellation,
// reports its deadline, and expires at it whether or not anything waited on it before.
func TestBudget(t *testing.T) {
	parent, cancelParent := context.WithCancel(context.WithValue(context.Background(), budgetKey{}, "request"))
	cancelParent() // a server shutting down: the review must still be answered
	b := newBudget(parent, 50*time.Millisecond)
	defer b.release()
	var ctx context.Context = b
	if ctx.Value(budgetKey{}) != "request" {
		t.Errorf("the request's value is lost")
	}
	if d, ok := ctx.Deadline(); !ok || time.Until(d) > 50*time.Millisecond {
		t.Errorf("Deadline() = %v, %v", d, ok)
	}
	if err := ctx.Err(); err != nil {
		t.Fatalf("Err() before the deadline = %v (the parent's cancellation leaked in?)", err)
	}
	child, cancelChild := context.WithCancel(ctx) // as the AWS SDK derives its contexts
	defer cancelChild()
	select {
	case <-child.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the budget never expired")
	}
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) || !errors.Is(child.Err(), context.DeadlineExceeded) {
		t.Errorf("after the deadline: Err() = %v, the child's %v", ctx.Err(), child.Err())
	}

	// Never waited on: the deadline alone decides, and Done, asked late, is closed at once.
	idle := newBudget(context.Background(), time.Millisecond)
	defer idle.release()
	time.Sleep(5 * time.Millisecond)
	if !errors.Is(idle.Err(), context.DeadlineExceeded) {
		t.Errorf("an idle budget past its deadline: Err() = %v", idle.Err())
	}
	select {
	case <-idle.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("Done of an expired budget is not closed")
	}

	// Released after waiting: the timer is stopped and the context canceled.
	armed := newBudget(context.Background(), time.Hour)
	_ = armed.Done()
	armed.release()
	if !errors.Is(armed.Err(), context.Canceled) {
		t.Errorf("a released budget: Err() = %v, want canceled", armed.Err())
	}
}
