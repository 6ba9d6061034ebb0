// Package promreg registers groups of Prometheus collectors as one: all of
// them, or none.
package promreg

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// RegisterAll registers every collector on reg. When one fails it
// unregisters those that succeeded, so the caller can fix the conflict and
// retry, and returns every failure joined.
func RegisterAll(reg prometheus.Registerer, cs ...prometheus.Collector) error {
	var errs []error
	var done []prometheus.Collector
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			errs = append(errs, err)
			continue
		}
		done = append(done, c)
	}
	if err := errors.Join(errs...); err != nil {
		for _, c := range done {
			reg.Unregister(c)
		}
		return err
	}
	return nil
}

// UnregisterAll unregisters every collector from reg.
func UnregisterAll(reg prometheus.Registerer, cs ...prometheus.Collector) {
	for _, c := range cs {
		reg.Unregister(c)
	}
}
