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

// Metrics are the webhook's Prometheus metrics: requests by decision, their duration,
// and findings by rule and the action taken.
type Metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	found    *prometheus.CounterVec

	// Every series, kept once first used (prometheus.Counter in requestSeries, prometheus.Observer in
	// durationSeries): WithLabelValues hashes and looks up its labels on every call, and every review
	// counts itself.
	requestSeries  [len(kindLabels) * len(operationLabels) * len(decisions)]atomic.Value
	durationSeries [len(kindLabels)]atomic.Value
}

// The label values: closed sets, so that no request can add a series. Any client that reaches the
// webhook's port can send a review of a made-up kind; each would otherwise be a new series kept for the
// life of the process, and enough of them would run it out of memory. Kinds and operations the webhook
// does not review are counted as "other".
var (
	kindLabels      = [...]string{objects.KindEC2NodeClass, objects.KindNodePool, objects.KindConfigMap, otherLabel}
	operationLabels = [...]string{string(admissionv1.Create), string(admissionv1.Update), string(admissionv1.Delete), string(admissionv1.Connect), otherLabel}
	decisions       = [...]string{"allow", "warn", "deny", "error"}
)

const otherLabel = "other"

// labelIndex is the position of v in labels, or of the last label ("other") when v is not one of them.
func labelIndex(labels []string, v string) int {
	if i := slices.Index(labels, v); i >= 0 {
		return i
	}
	return len(labels) - 1
}

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

// Decisions of a review, positions in decisions.
const (
	decisionAllow = iota
	decisionWarn
	decisionDeny
	decisionError
)

// observe counts one answered review.
func (m *Metrics) observe(req admission.Request, resp *admission.Response, d time.Duration) {
	decision := decisionAllow
	switch {
	case !resp.Allowed && resp.Result != nil && resp.Result.Code >= 400 && resp.Result.Code != 403:
		decision = decisionError
	case !resp.Allowed:
		decision = decisionDeny
	case len(resp.Warnings) > 0:
		decision = decisionWarn
	}
	k, o := labelIndex(kindLabels[:], req.Kind.Kind), labelIndex(operationLabels[:], string(req.Operation))
	keep(&m.requestSeries[(k*len(operationLabels)+o)*len(decisions)+decision], func() prometheus.Counter {
		return m.requests.WithLabelValues(kindLabels[k], operationLabels[o], decisions[decision])
	}).Inc()
	keep(&m.durationSeries[k], func() prometheus.Observer { return m.duration.WithLabelValues(kindLabels[k]) }).Observe(d.Seconds())
}

// keep returns the series kept in slot, making it with series on first use.
func keep[T any](slot *atomic.Value, series func() T) T {
	if s, ok := slot.Load().(T); ok {
		return s
	}
	s := series()
	slot.Store(s)
	return s
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
