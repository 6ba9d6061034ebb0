// Package promreg registers groups of Prometheus collectors as one: all of
// them, or none.
package promreg

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// RegisterAll registers every collector on reg. When one fails it
// unregisters those that succeeded, so the caller can fix the conflict and
// retry, and returns a *RegisterError naming the metrics that failed.
func RegisterAll(reg prometheus.Registerer, cs ...prometheus.Collector) error {
	var fail RegisterError
	var done []prometheus.Collector
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			fail.add(c, err)
			continue
		}
		done = append(done, c)
	}
	if len(fail.errs) == 0 {
		return nil
	}
	for _, c := range done {
		reg.Unregister(c)
	}
	return &fail
}

// UnregisterAll unregisters every collector from reg.
func UnregisterAll(reg prometheus.Registerer, cs ...prometheus.Collector) {
	for _, c := range cs {
		reg.Unregister(c)
	}
}

// RegisterError reports the collectors RegisterAll could not register. It
// unwraps to the Registerer's errors, so errors.As finds a
// prometheus.AlreadyRegisteredError.
type RegisterError struct {
	// Taken names the metrics already registered on the Registerer.
	Taken []string
	// Other holds the other failures, each naming its metrics.
	Other []error

	errs []error // every failure, as the Registerer returned it
}

func (e *RegisterError) add(c prometheus.Collector, err error) {
	e.errs = append(e.errs, err)
	names := metricNames(c)
	if _, ok := errors.AsType[prometheus.AlreadyRegisteredError](err); ok {
		e.Taken = append(e.Taken, names...)
		return
	}
	e.Other = append(e.Other, fmt.Errorf("metric %s: %w", strings.Join(names, ", "), err))
}

// Error names the metrics that failed and what to do about them.
func (e *RegisterError) Error() string {
	var b strings.Builder
	if len(e.Taken) > 0 {
		fmt.Fprintf(&b, "metrics %s already registered on this Registerer, want each registered once: "+
			"close the component that registered them first, or give each component its own view of the "+
			"registry with prometheus.WrapRegistererWith (a label telling them apart)",
			strings.Join(e.Taken, ", "))
	}
	for _, err := range e.Other {
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		b.WriteString(err.Error())
	}
	return b.String()
}

// Unwrap returns the Registerer's errors.
func (e *RegisterError) Unwrap() []error { return e.errs }

// fqName finds the metric name in a prometheus.Desc's String, which has
// no accessor for it.
var fqName = regexp.MustCompile(`fqName: "([^"]*)"`)

// metricNames returns the names of the metrics c describes.
func metricNames(c prometheus.Collector) []string {
	ch := make(chan *prometheus.Desc)
	go func() {
		c.Describe(ch)
		close(ch)
	}()
	var names []string
	for d := range ch {
		s := d.String()
		if m := fqName.FindStringSubmatch(s); m != nil {
			s = m[1]
		}
		names = append(names, s)
	}
	if len(names) == 0 {
		names = []string{fmt.Sprintf("(unnamed %T)", c)}
	}
	return names
}
