package awscall

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	smithy "github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/karpenter-guard/karpenter-guard/facts"
)

// clock is a clock a test moves by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// wire stands for AWS behind the pacer: it counts the requests that reach it and answers each with
// the error it is set to (nil: success).
type wire struct {
	mu   sync.Mutex
	sent atomic.Int64
	err  error
}

func (w *wire) answer(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.err = err
}

// call sends one request of service (its SDK service ID, "IAM") through a middleware stack holding
// the pacer, as the SDK's clients do.
func (w *wire) call(ctx context.Context, p *Pacer, service string) error {
	stack := middleware.NewStack("SimulatePrincipalPolicy", smithyhttp.NewStackRequest)
	if err := stack.Initialize.Add(&awsmiddleware.RegisterServiceMetadata{ServiceID: service, OperationName: "SimulatePrincipalPolicy"}, middleware.Before); err != nil {
		return err
	}
	if err := p.Install(stack); err != nil {
		return err
	}
	h := middleware.DecorateHandler(middleware.HandlerFunc(func(context.Context, any) (any, middleware.Metadata, error) {
		w.sent.Add(1)
		w.mu.Lock()
		defer w.mu.Unlock()
		return nil, middleware.Metadata{}, w.err
	}), stack)
	_, _, err := h.Handle(ctx, nil)
	return err
}

var throttling = &smithy.GenericAPIError{Code: "Throttling", Message: "Rate exceeded"}

func newTestPacer(t *testing.T, c *clock, limits map[string]Limit) (*Pacer, *Metrics) {
	t.Helper()
	m, err := NewMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	return NewPacer(PacerOptions{Limits: limits, Now: c.Now, Jitter: func() float64 { return 0 }, Metrics: m}), m
}

// TestPacerBackoffWhileThrottled: once IAM throttles, 300 distinct questions cost no request on the
// wire until the backoff ends; then a single call probes, and a throttled probe doubles the backoff;
// every refused call is worded as throttled, naming the backoff; an answer ends the backoff; another
// service is not held back.
func TestPacerBackoffWhileThrottled(t *testing.T) {
	c := &clock{now: time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)}
	p, m := newTestPacer(t, c, nil)
	w := &wire{err: throttling}
	ctx := context.Background()

	err := w.call(ctx, p, "IAM")
	var te *ThrottledError
	if !errors.As(err, &te) || te.Err == nil || te.Left != time.Second {
		t.Fatalf("the throttled answer: %v; want a ThrottledError wrapping AWS's, backing off 1s (half of 2s: no jitter)", err)
	}
	for i := 0; i < 300; i++ {
		err := w.call(ctx, p, "IAM")
		if Classify(err) != OutcomeThrottled {
			t.Fatalf("call %d during the backoff: %v, classified %s; want throttled", i, err, Classify(err))
		}
		want := "AWS throttled iam:SimulatePrincipalPolicy; karpenter-guard backs off every IAM call until AWS answers again"
		if got := NewCallError("iam:SimulatePrincipalPolicy", err, time.Second).Reason(); got != want {
			t.Fatalf("reason %q, want %q", got, want)
		}
	}
	if got := w.sent.Load(); got != 1 {
		t.Fatalf("%d requests reached IAM while it throttled; want only the first", got)
	}
	if got := testutil.ToFloat64(m.refused.WithLabelValues("iam", refusedBackoff)); got != 300 {
		t.Errorf("refused by the backoff: %v, want 300", got)
	}
	if got := testutil.ToFloat64(m.backoff.WithLabelValues("iam")); got != 1 {
		t.Errorf("backoff gauge %vs, want 1s", got)
	}

	// Another service is paced on its own.
	w.answer(nil)
	if err := w.call(ctx, p, "EC2"); err != nil {
		t.Fatalf("EC2 while IAM backs off: %v", err)
	}
	w.answer(throttling)
	sentBefore := w.sent.Load()

	// After the backoff, 300 questions at once: one probe goes on the wire, the others wait for it.
	c.Add(time.Second)
	var wg sync.WaitGroup
	var throttled atomic.Int64
	for i := 0; i < 300; i++ {
		wg.Go(func() {
			if Classify(w.call(ctx, p, "IAM")) == OutcomeThrottled {
				throttled.Add(1)
			}
		})
	}
	wg.Wait()
	if got := w.sent.Load() - sentBefore; got != 1 {
		t.Fatalf("%d requests after the backoff; want one probe", got)
	}
	if throttled.Load() != 300 {
		t.Errorf("%d of 300 answers throttled; want all", throttled.Load())
	}
	if got := testutil.ToFloat64(m.backoff.WithLabelValues("iam")); got != 2 {
		t.Errorf("after a throttled probe the backoff is %vs, want it doubled to 2s", got)
	}

	// The probe after that one is answered: the backoff ends and every call goes on the wire again.
	c.Add(2 * time.Second)
	w.answer(&smithy.GenericAPIError{Code: "NoSuchEntity"}) // an answer, although negative
	sentBefore = w.sent.Load()
	for i := 0; i < 5; i++ {
		if Classify(w.call(ctx, p, "IAM")) != OutcomeNotFound {
			t.Fatalf("call %d after the throttling ended: not IAM's own answer", i)
		}
	}
	if got := w.sent.Load() - sentBefore; got != 5 {
		t.Errorf("%d of 5 calls sent once IAM answered; want all", got)
	}
	if got := testutil.ToFloat64(m.backoff.WithLabelValues("iam")); got != 0 {
		t.Errorf("backoff gauge %vs after an answer, want 0", got)
	}

	// A new throttling starts again from the shortest backoff: the success reset it.
	w.answer(throttling)
	if err := w.call(ctx, p, "IAM"); !errors.As(err, &te) || te.Left != time.Second {
		t.Errorf("throttled again after a success: %v; want a backoff of 1s again", err)
	}
}

// TestPacerBackoffGrowsToItsBound: each throttled probe doubles the backoff up to BackoffMax, with
// jitter between half and all of it.
func TestPacerBackoffGrowsToItsBound(t *testing.T) {
	c := &clock{now: time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)}
	p := NewPacer(PacerOptions{Now: c.Now, Jitter: func() float64 { return 0.5 }})
	w := &wire{err: throttling}
	var got []time.Duration
	for i := 0; i < 10; i++ {
		var te *ThrottledError
		if err := w.call(context.Background(), p, "IAM"); !errors.As(err, &te) || te.Err == nil {
			t.Fatalf("probe %d: %v; want AWS's throttling", i, err)
		}
		got = append(got, te.Left)
		c.Add(te.Left)
	}
	want := []time.Duration{1500 * time.Millisecond, 3 * time.Second, 6 * time.Second, 12 * time.Second, 24 * time.Second,
		48 * time.Second, 90 * time.Second, 90 * time.Second, 90 * time.Second, 90 * time.Second}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("backoffs %v, want %v", got, want)
		}
	}
	if w.sent.Load() != 10 {
		t.Errorf("%d requests; want one per backoff", w.sent.Load())
	}
}

// TestPacerCallBudget: calls made for an audit are charged to its budget; what does not fit is not
// sent, is worded as the spent budget, and is not retried; other callers are not charged.
func TestPacerCallBudget(t *testing.T) {
	c := &clock{now: time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)}
	p, m := newTestPacer(t, c, nil)
	w := &wire{}
	budget := facts.NewCallBudget(5)
	ctx := facts.WithCallBudget(context.Background(), budget)
	var refused []error
	for i := 0; i < 8; i++ {
		if err := w.call(ctx, p, "EC2"); err != nil {
			refused = append(refused, err)
		}
	}
	if w.sent.Load() != 5 || len(refused) != 3 || budget.Used() != 5 {
		t.Fatalf("%d sent, %d refused, %d used; want 5, 3 and 5", w.sent.Load(), len(refused), budget.Used())
	}
	for _, err := range refused {
		ce := NewCallError("ec2:DescribeImages", err, time.Second)
		if want := "the audit's budget of 5 AWS calls is spent; the next audit asks the rest"; ce.Reason() != want || !ce.Transient() {
			t.Errorf("reason %q (transient %v), want %q", ce.Reason(), ce.Transient(), want)
		}
		var r interface{ RetryableError() bool }
		if !errors.As(err, &r) || r.RetryableError() {
			t.Errorf("%v: the SDK would retry it", err)
		}
	}
	if got := testutil.ToFloat64(m.refused.WithLabelValues("ec2", refusedBudget)); got != 3 {
		t.Errorf("refused by the budget: %v, want 3", got)
	}
	if err := w.call(context.Background(), p, "EC2"); err != nil || w.sent.Load() != 6 {
		t.Errorf("a review's call while the audit's budget is spent: %v", err)
	}
}

// TestPacerRateLimit: a burst goes at once; a call that would have to wait past its deadline for the
// rate limit is not sent and ends as a late answer, giving its place back.
func TestPacerRateLimit(t *testing.T) {
	c := &clock{now: time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)}
	p, m := newTestPacer(t, c, map[string]Limit{"iam": {PerSecond: 0.1, Burst: 3}})
	w := &wire{}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var late int
	for i := 0; i < 5; i++ {
		err := w.call(ctx, p, "IAM")
		switch {
		case err == nil:
		case Classify(err) == OutcomeTimeout && strings.Contains(err.Error(), "IAM rate limit would delay it 10s"):
			late++
		default:
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if w.sent.Load() != 3 || late != 2 {
		t.Fatalf("%d sent, %d late; want the burst of 3 sent and 2 late", w.sent.Load(), late)
	}
	if got := testutil.ToFloat64(m.delayed.WithLabelValues("iam")); got != 2 {
		t.Errorf("delayed: %v, want 2", got)
	}
	if got := testutil.ToFloat64(m.refused.WithLabelValues("iam", refusedDeadline)); got != 2 {
		t.Errorf("refused for the deadline: %v, want 2", got)
	}
	// The late calls gave their place back: ten seconds later exactly one more goes.
	c.Add(10 * time.Second)
	if err := w.call(ctx, p, "IAM"); err != nil {
		t.Fatalf("after 10s at 0.1/s: %v", err)
	}
	if err := w.call(ctx, p, "IAM"); Classify(err) != OutcomeTimeout {
		t.Errorf("a second call within the same 10s: %v, want late", err)
	}
	// Another service has no limit.
	for i := 0; i < 10; i++ {
		if err := w.call(ctx, p, "EC2"); err != nil {
			t.Fatalf("EC2: %v", err)
		}
	}
}

// TestPacerBurstOfThrottlesIsOneStep: calls sent together before the first throttling answer came back,
// and throttled alike, lengthen the backoff once, not once each.
func TestPacerBurstOfThrottlesIsOneStep(t *testing.T) {
	c := &clock{now: time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)}
	p, _ := newTestPacer(t, c, nil)
	s := p.service("iam")
	for i := 0; i < 8; i++ {
		if probe, _, ok := s.admit(c.Now()); !ok || probe {
			t.Fatalf("call %d of the burst not admitted as a plain call", i)
		}
	}
	for i := 0; i < 8; i++ {
		if d, throttled := s.settle(c.Now(), OutcomeThrottled, false, p.opts); !throttled || d != time.Second {
			t.Fatalf("throttled answer %d of the burst: backoff %v, want 1s", i, d)
		}
	}
	if s.failures != 1 {
		t.Errorf("a burst of 8 throttled answers counted %d steps; want 1", s.failures)
	}
}
