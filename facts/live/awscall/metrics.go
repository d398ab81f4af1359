package awscall

import (
	"context"
	"strings"
	"time"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/middleware"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/cache"
	"github.com/karpenter-guard/karpenter-guard/internal/prom"
)

// Metrics are the live provider's Prometheus metrics: every HTTP request to AWS, its duration, and
// every cache lookup of every concept provider. A nil *Metrics counts nothing.
type Metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	lookups  *prometheus.CounterVec

	delayed *prometheus.CounterVec
	refused *prometheus.CounterVec
	backoff *prometheus.GaugeVec
}

// Why the Pacer did not send a call, as karpenter_guard_aws_requests_refused_total labels it.
const (
	refusedBackoff  = "backoff"
	refusedBudget   = "budget"
	refusedDeadline = "deadline"
)

// NewMetrics creates the metrics and registers them with reg (nil: not registered, as in tests and
// one-shot CLI runs).
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "karpenter_guard_aws_requests_total",
			Help: "HTTP requests to AWS APIs (each retry counts), by service, operation and outcome.",
		}, []string{"service", "operation", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "karpenter_guard_aws_request_duration_seconds",
			Help:    "Duration of HTTP requests to AWS APIs, by service and operation.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2, 5},
		}, []string{"service", "operation"}),
		lookups: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "karpenter_guard_facts_cache_total",
			Help: "Lookups of facts in the live provider's cache, by fact and result (hit, miss, stale, error).",
		}, []string{"fact", "result"}),
		delayed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "karpenter_guard_aws_requests_delayed_total",
			Help: "Requests to AWS that waited for karpenter-guard's own rate limit of their service (aws.requestsPerSecond), by service.",
		}, []string{"service"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "karpenter_guard_aws_requests_refused_total",
			Help: "Calls to AWS that karpenter-guard did not send, by service and reason: backoff (AWS throttled the service a moment ago), " +
				"budget (the audit's aws.auditCallBudget is spent), deadline (the rate limit would have delayed it past its deadline).",
		}, []string{"service", "reason"}),
		backoff: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "karpenter_guard_aws_backoff_seconds",
			Help: "Length of the backoff karpenter-guard started after AWS last throttled the service, 0 once the service answers again, by service.",
		}, []string{"service"}),
	}
	if err := prom.Register(reg, m.requests, m.duration, m.lookups, m.delayed, m.refused, m.backoff); err != nil {
		return nil, err
	}
	return m, nil
}

// CountLookup counts a cache lookup of fact f by its result.
func (m *Metrics) CountLookup(f facts.Fact, r cache.Result) {
	if m == nil {
		return
	}
	m.lookups.WithLabelValues(string(f), string(r)).Inc()
}

// Instrument adds the request metrics to an SDK client's middleware stack (an entry of
// aws.Config.APIOptions), after the retry middleware so that every attempt is counted with its own
// outcome.
func (m *Metrics) Instrument(stack *middleware.Stack) error {
	return stack.Finalize.Add(middleware.FinalizeMiddlewareFunc("karpenter-guard/metrics",
		func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
			start := time.Now()
			out, md, err := next.HandleFinalize(ctx, in)
			svc := strings.ToLower(awsmiddleware.GetServiceID(ctx))
			op := awsmiddleware.GetOperationName(ctx)
			m.requests.WithLabelValues(svc, op, string(Classify(err))).Inc()
			m.duration.WithLabelValues(svc, op).Observe(time.Since(start).Seconds())
			return out, md, err
		}), middleware.After)
}

// countDelayed counts a request that waited for its service's rate limit.
func (m *Metrics) countDelayed(service string) {
	if m == nil {
		return
	}
	m.delayed.WithLabelValues(service).Inc()
}

// countRefused counts a call the Pacer did not send, and why.
func (m *Metrics) countRefused(service, reason string) {
	if m == nil {
		return
	}
	m.refused.WithLabelValues(service, reason).Inc()
}

// setBackoff exports the length of service's backoff (0: none).
func (m *Metrics) setBackoff(service string, d time.Duration) {
	if m == nil {
		return
	}
	m.backoff.WithLabelValues(service).Set(d.Seconds())
}
