// Package prom registers karpenter-guard's Prometheus collectors.
package prom

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Register registers every collector with reg (nil: none is registered, as in tests and one-shot CLI
// runs). A name registered twice is an error: the second collector would count unseen.
func Register(reg prometheus.Registerer, cs ...prometheus.Collector) error {
	if reg == nil {
		return nil
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("register metrics: %w", err)
		}
	}
	return nil
}
