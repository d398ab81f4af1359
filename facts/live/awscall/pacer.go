package awscall

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/middleware"
	"golang.org/x/time/rate"

	"github.com/karpenter-guard/karpenter-guard/facts"
)

// Limit is a client-side rate limit of one AWS service: a token bucket of Burst requests refilled at
// PerSecond.
type Limit struct {
	PerSecond float64
	Burst     int
}

// Backoff bounds of a service AWS throttles: the first backoff lasts about BackoffMin, each
// throttling answer after it doubles it, up to BackoffMax.
const (
	DefaultBackoffMin = 2 * time.Second
	DefaultBackoffMax = 2 * time.Minute
)

// PacerOptions tune a Pacer.
type PacerOptions struct {
	// Limits are the rate limits by service, named as the GuardConfig's aws.requestsPerSecond names
	// them (ServiceKey: "iam", "ec2", "servicequotas"); a service without one is not rate-limited,
	// but still backs off.
	Limits map[string]Limit
	// BackoffMin and BackoffMax bound the backoff (defaults DefaultBackoffMin, DefaultBackoffMax).
	BackoffMin, BackoffMax time.Duration
	// Now is the clock of the backoff and the limiters (default time.Now); tests move it.
	Now func() time.Time
	// Jitter returns a number in [0, 1) that spreads each backoff between half and all of its length
	// (default math/rand/v2), so that replicas do not come back in step.
	Jitter func() float64
	// Metrics count delayed and refused requests and export each service's backoff (nil: none).
	Metrics *Metrics
}

// Pacer keeps karpenter-guard polite to AWS, whatever asks: every request attempt the SDK sends
// (retries included) waits for its service's rate limit; after AWS throttles a service, every call of
// that service fails at once without being sent until the backoff ends (one call then probes whether
// the throttling is over); and a request made for an audit is charged to the audit's call budget
// (facts.CallBudget in its context), and not sent when it is spent. Share one Pacer between every
// client of the process: AWS's limits are per account and service, not per client.
//
// A throttled call is not retried by the SDK when a Pacer is installed: its error says not to,
// because retrying inside the backoff is what turns a throttling answer into a storm.
type Pacer struct {
	opts PacerOptions

	mu       sync.Mutex
	services map[string]*pace
}

// pace is the state of one service.
type pace struct {
	limiter *rate.Limiter // nil: not rate-limited

	mu       sync.Mutex
	failures int       // throttling answers in a row
	until    time.Time // no call is sent before
	probing  bool      // after the backoff, one call is in flight to see whether AWS answers again
}

// NewPacer returns a pacer.
func NewPacer(opts PacerOptions) *Pacer {
	if opts.BackoffMin <= 0 {
		opts.BackoffMin = DefaultBackoffMin
	}
	if opts.BackoffMax < opts.BackoffMin {
		opts.BackoffMax = max(DefaultBackoffMax, opts.BackoffMin)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Jitter == nil {
		opts.Jitter = rand.Float64
	}
	return &Pacer{opts: opts, services: map[string]*pace{}}
}

// ServiceKey is the name of the service of an SDK request as the GuardConfig writes it: its service
// ID in lower case without spaces ("IAM" is "iam", "Service Quotas" is "servicequotas").
func ServiceKey(ctx context.Context) string {
	return strings.ToLower(strings.ReplaceAll(awsmiddleware.GetServiceID(ctx), " ", ""))
}

// Install adds the pacer to an SDK client's middleware stack (an entry of aws.Config.APIOptions),
// after the retry middleware, so that it sees every attempt. Installed before Metrics.Instrument, it
// keeps the calls it refuses out of the request metrics: they never reach AWS.
func (p *Pacer) Install(stack *middleware.Stack) error {
	return stack.Finalize.Add(middleware.FinalizeMiddlewareFunc("karpenter-guard/pacer", p.handle), middleware.After)
}

func (p *Pacer) handle(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
	svc := ServiceKey(ctx)
	s := p.service(svc)
	if left, ok := s.open(p.opts.Now()); !ok {
		p.opts.Metrics.countRefused(svc, refusedBackoff)
		return middleware.FinalizeOutput{}, middleware.Metadata{}, &ThrottledError{Service: svc, Left: left}
	}
	budget := facts.CallBudgetFrom(ctx)
	if budget != nil && !budget.Take() {
		p.opts.Metrics.countRefused(svc, refusedBudget)
		return middleware.FinalizeOutput{}, middleware.Metadata{}, &BudgetError{Limit: budget.Limit()}
	}
	if err := p.wait(ctx, svc, s); err != nil {
		if budget != nil {
			budget.Refund()
		}
		return middleware.FinalizeOutput{}, middleware.Metadata{}, err
	}
	// Asked again after the wait: AWS may have throttled another call meanwhile.
	probe, left, ok := s.admit(p.opts.Now())
	if !ok {
		if budget != nil {
			budget.Refund()
		}
		p.opts.Metrics.countRefused(svc, refusedBackoff)
		return middleware.FinalizeOutput{}, middleware.Metadata{}, &ThrottledError{Service: svc, Left: left}
	}
	out, md, err := next.HandleFinalize(ctx, in)
	if d, throttled := s.settle(p.opts.Now(), Classify(err), probe, p.opts); throttled {
		p.opts.Metrics.setBackoff(svc, d)
		return out, md, &ThrottledError{Service: svc, Left: d, Err: err}
	} else if d == 0 {
		p.opts.Metrics.setBackoff(svc, 0)
	}
	return out, md, err
}

// service returns the state of svc, made on first use.
func (p *Pacer) service(svc string) *pace {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.services[svc]
	if s == nil {
		s = &pace{}
		if l, ok := p.opts.Limits[svc]; ok && l.PerSecond > 0 {
			s.limiter = rate.NewLimiter(rate.Limit(l.PerSecond), max(l.Burst, 1))
		}
		p.services[svc] = s
	}
	return s
}

// wait waits for svc's rate limit. A wait that would outlast ctx's deadline does not start: it ends
// at once as a late answer (LimitError), the token given back.
func (p *Pacer) wait(ctx context.Context, svc string, s *pace) error {
	if s.limiter == nil {
		return nil
	}
	now := p.opts.Now()
	r := s.limiter.ReserveN(now, 1)
	delay := r.DelayFrom(now)
	if delay <= 0 {
		return nil
	}
	p.opts.Metrics.countDelayed(svc)
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < delay {
		r.CancelAt(now)
		p.opts.Metrics.countRefused(svc, refusedDeadline)
		return &LimitError{Service: svc, Delay: delay, Err: context.DeadlineExceeded}
	}
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		r.CancelAt(p.opts.Now())
		return &LimitError{Service: svc, Delay: delay, Err: context.Cause(ctx)}
	}
}

// open says whether a call may be sent now, as admit does, without taking the probe: a call checks
// it before it waits for the rate limit, and is admitted after.
func (s *pace) open(now time.Time) (left time.Duration, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case now.Before(s.until):
		return s.until.Sub(now), false
	case s.failures > 0 && s.probing:
		return 0, false
	}
	return 0, true
}

// admit says whether a call may be sent now: not during a backoff (left is what remains of it), and
// after one only the probe, one call at a time, until AWS answers it.
func (s *pace) admit(now time.Time) (probe bool, left time.Duration, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case now.Before(s.until):
		return false, s.until.Sub(now), false
	case s.failures == 0:
		return false, 0, true
	case s.probing:
		return false, 0, false
	}
	s.probing = true
	return true, 0, true
}

// settle records how AWS answered: a throttling answer starts or lengthens the backoff (its length
// is returned, with throttled); any answer from the service itself (even "not found" or "access
// denied") ends it (d 0). A call that got no answer (a timeout, a network error) changes nothing but
// frees the probe (d -1).
func (s *pace) settle(now time.Time, o Outcome, probe bool, opts PacerOptions) (d time.Duration, throttled bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if probe {
		s.probing = false
	}
	switch o {
	case OutcomeThrottled:
		if !probe && now.Before(s.until) {
			// Sent before the backoff started, with others AWS throttled alike: one burst, one step.
			return s.until.Sub(now), true
		}
		s.failures++
		full := opts.BackoffMax
		if s.failures < 32 {
			full = min(opts.BackoffMax, opts.BackoffMin<<(s.failures-1))
		}
		d = full/2 + time.Duration(opts.Jitter()*float64(full/2))
		s.until = now.Add(d)
		return d, true
	case OutcomeSuccess, OutcomeNotFound, OutcomeDenied, OutcomeUnavailable, OutcomeCredentials:
		s.failures, s.until = 0, time.Time{}
		return 0, false
	}
	return -1, false
}

// ThrottledError is a call of a service AWS is throttling: the answer that started or lengthened the
// backoff (Err, AWS's own error), or a call refused without being sent because the backoff has not
// ended (Err nil). Both are worded alike, so that the rules they leave not evaluated read as one
// cause. The SDK does not retry it.
type ThrottledError struct {
	// Service is the service's key ("iam").
	Service string
	// Left is what remains of the backoff (0 while another call probes whether it is over).
	Left time.Duration
	Err  error
}

func (e *ThrottledError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%v (karpenter-guard backs off %s calls for %v)", e.Err, strings.ToUpper(e.Service), e.Left.Round(time.Millisecond))
	}
	if e.Left > 0 {
		return fmt.Sprintf("not sent: AWS throttled %s a moment ago and karpenter-guard backs off its calls for %v more", strings.ToUpper(e.Service), e.Left.Round(time.Millisecond))
	}
	return fmt.Sprintf("not sent: AWS throttled %s and karpenter-guard waits for one call to see whether the throttling is over", strings.ToUpper(e.Service))
}

// Unwrap returns AWS's throttling error, if the call was sent.
func (e *ThrottledError) Unwrap() error { return e.Err }

// RetryableError tells the SDK's retryer not to retry: the backoff decides when to ask again.
func (e *ThrottledError) RetryableError() bool { return false }

// BudgetError is a call of an audit not sent because the audit's call budget is spent.
type BudgetError struct {
	// Limit is the budget's number of calls.
	Limit int
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("not sent: the audit's budget of %d AWS calls is spent", e.Limit)
}

// RetryableError tells the SDK's retryer not to retry.
func (e *BudgetError) RetryableError() bool { return false }

// Fleeting tells the cache not to keep it (cache.Fleeting): the budget is the audit's, and an
// admission review asking the same question a moment later is not bounded by it.
func (e *BudgetError) Fleeting() bool { return true }

// LimitError is a call that would have had to wait for its service's rate limit past its deadline
// (or whose wait was cancelled): not sent, answered as late. It wraps the context's error.
type LimitError struct {
	Service string
	Delay   time.Duration
	Err     error
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("not sent: the %s rate limit would delay it %v, past its deadline: %v", strings.ToUpper(e.Service), e.Delay.Round(time.Millisecond), e.Err)
}

// Unwrap returns the context's error.
func (e *LimitError) Unwrap() error { return e.Err }

// RetryableError tells the SDK's retryer not to retry: the deadline has (or would have) passed.
func (e *LimitError) RetryableError() bool { return false }
