package live

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/karpenter-guard/karpenter-guard/facts/live/awscall"
)

// Metrics are the live provider's Prometheus metrics: every HTTP request to AWS, its duration, and
// every cache lookup of every concept provider (see awscall.Metrics).
type Metrics = awscall.Metrics

// NewMetrics creates the metrics and registers them with reg (nil: not registered, as in tests and
// one-shot CLI runs).
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) { return awscall.NewMetrics(reg) }
