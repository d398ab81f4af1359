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
}

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
	}
	if err := prom.Register(reg, m.requests, m.duration, m.lookups); err != nil {
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
