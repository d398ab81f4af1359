package webhook

import (
	"slices"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/karpenter-guard/karpenter-guard/internal/prom"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

// Metrics are the webhook's Prometheus metrics (interfaces.md): requests by decision, their duration,
// and findings by rule and the action taken.
type Metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	found    *prometheus.CounterVec

	// The series of the kinds, operations and decisions the webhook reviews, kept once first used
	// (prometheus.Counter in requestSeries, prometheus.Observer in durationSeries): WithLabelValues
	// hashes and looks up its labels on every call, and every review counts itself.
	requestSeries  [len(reviewedKinds) * len(operations) * len(decisions)]atomic.Value
	durationSeries [len(reviewedKinds)]atomic.Value
}

// The label values whose series Metrics keeps; others are looked up every time.
var (
	reviewedKinds = [...]string{objects.KindEC2NodeClass, objects.KindNodePool, objects.KindConfigMap}
	operations    = [...]admissionv1.Operation{admissionv1.Create, admissionv1.Update, admissionv1.Delete, admissionv1.Connect}
	decisions     = [...]string{"allow", "warn", "deny", "error"}
)

// NewMetrics creates the metrics and registers them with reg (nil: not registered).
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "karpenter_guard_admission_requests_total",
			Help: "Admission reviews answered, by kind, operation and decision (allow, warn, deny, error).",
		}, []string{"kind", "operation", "decision"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "karpenter_guard_admission_duration_seconds",
			Help:    "Time to answer an admission review, by kind.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"kind"}),
		found: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "karpenter_guard_findings_total",
			Help: "Findings of admission reviews, by rule and the action taken (deny, warn, audit; would-deny and would-warn in mode dry-run).",
		}, []string{"rule", "action"}),
	}
	if err := prom.Register(reg, m.requests, m.duration, m.found); err != nil {
		return nil, err
	}
	return m, nil
}

// observe counts one answered review.
func (m *Metrics) observe(req admission.Request, resp *admission.Response, d time.Duration) {
	decision := "allow"
	switch {
	case !resp.Allowed && resp.Result != nil && resp.Result.Code >= 400 && resp.Result.Code != 403:
		decision = "error"
	case !resp.Allowed:
		decision = "deny"
	case len(resp.Warnings) > 0:
		decision = "warn"
	}
	m.requestCounter(req.Kind.Kind, req.Operation, decision).Inc()
	m.durationObserver(req.Kind.Kind).Observe(d.Seconds())
}

func (m *Metrics) requestCounter(kind string, op admissionv1.Operation, decision string) prometheus.Counter {
	k, o, d := slices.Index(reviewedKinds[:], kind), slices.Index(operations[:], op), slices.Index(decisions[:], decision)
	if k < 0 || o < 0 || d < 0 {
		return m.requests.WithLabelValues(kind, string(op), decision)
	}
	series := &m.requestSeries[(k*len(operations)+o)*len(decisions)+d]
	if c, ok := series.Load().(prometheus.Counter); ok {
		return c
	}
	c := m.requests.WithLabelValues(kind, string(op), decision)
	series.Store(c)
	return c
}

func (m *Metrics) durationObserver(kind string) prometheus.Observer {
	k := slices.Index(reviewedKinds[:], kind)
	if k < 0 {
		return m.duration.WithLabelValues(kind)
	}
	if o, ok := m.durationSeries[k].Load().(prometheus.Observer); ok {
		return o
	}
	o := m.duration.WithLabelValues(kind)
	m.durationSeries[k].Store(o)
	return o
}

// findings counts a verdict's findings by the action taken.
func (m *Metrics) findings(v *verdict) {
	v.eachTaken(func(f validators.Finding, t taken) {
		action := t.action
		if t.would {
			action = "would-" + action
		}
		m.found.WithLabelValues(f.Rule, action).Inc()
	})
}
