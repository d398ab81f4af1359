// Package prom registers karpenter-guard's Prometheus collectors.
package prom

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Register registers every collector with reg (nil: none is registered, as in tests and one-shot CLI
// runs). A collector registered before is kept: a second provider or webhook in one process shares it.
func Register(reg prometheus.Registerer, cs ...prometheus.Collector) error {
	if reg == nil {
		return nil
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			var already prometheus.AlreadyRegisteredError
			if !errors.As(err, &already) {
				return err
			}
		}
	}
	return nil
}
