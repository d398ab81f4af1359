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
	// net/http reports context.Cause: the request's cancellation must not show through.
	if cause := context.Cause(child); !errors.Is(cause, context.DeadlineExceeded) {
		t.Errorf("after the deadline: the child's cause is %v, want the deadline", cause)
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

	// Released, as WithTimeout's cancel: canceled from then on, whether anything waited or not.
	armed := newBudget(context.Background(), time.Hour)
	_ = armed.Done()
	armed.release()
	if !errors.Is(armed.Err(), context.Canceled) {
		t.Errorf("a released budget: Err() = %v, want canceled", armed.Err())
	}
	unarmed := newBudget(context.Background(), time.Hour)
	unarmed.release()
	select {
	case <-unarmed.Done():
	default:
		t.Error("Done of a budget released before anything waited is open")
	}
	if !errors.Is(unarmed.Err(), context.Canceled) {
		t.Errorf("a budget released before anything waited: Err() = %v, want canceled", unarmed.Err())
	}
	// Past its deadline, released: the deadline came first and stays the answer.
	late := newBudget(context.Background(), time.Millisecond)
	time.Sleep(5 * time.Millisecond)
	late.release()
	if !errors.Is(late.Err(), context.DeadlineExceeded) {
		t.Errorf("a budget released after its deadline: Err() = %v, want the deadline", late.Err())
	}
}
