package proflow

import (
	"errors"
	"fmt"
	"time"
)

// IntervalBound is an optional Policy (or BatchPolicy) capability: a policy
// fitted at one control interval — a learned agent, whose states carry
// rates of change per interval and whose gate counts votes in intervals —
// reports that interval. NewController, and NewMultiController and AddFlow
// for the policies they get, refuse such a policy when its TrainedInterval
// differs from the controller's interval (a *IntervalMismatchError). A
// TrainedInterval of 0 or less binds to no interval.
type IntervalBound interface {
	TrainedInterval() time.Duration
}

// ErrIntervalMismatch is matched by an *IntervalMismatchError.
var ErrIntervalMismatch = errors.New("proflow: policy trained at another control interval")

// IntervalMismatchError reports a policy trained at another control interval
// than the controller runs at.
type IntervalMismatchError struct {
	// Policy is the policy's type, for example "*policy.Agent".
	Policy string
	// Trained is the policy's TrainedInterval, Interval the controller's.
	Trained, Interval time.Duration
}

// Error names both intervals and the remedy.
func (e *IntervalMismatchError) Error() string {
	return fmt.Sprintf("policy %s was trained at a %v control interval, but the controller runs every %v (Config.Interval): "+
		"set the interval to %v, or train a model at %v (make model with a simulator profile whose interval is %v; see models/README.md)",
		e.Policy, e.Trained, e.Interval, e.Trained, e.Interval, e.Interval)
}

// Is makes IntervalMismatchError match ErrIntervalMismatch.
func (e *IntervalMismatchError) Is(target error) bool { return target == ErrIntervalMismatch }

// checkInterval refuses a policy bound to another interval than interval.
func checkInterval(pol any, interval time.Duration) error {
	b, ok := pol.(IntervalBound)
	if !ok {
		return nil
	}
	var trained time.Duration
	if err := call("IntervalBound", "TrainedInterval", pol, func() error { trained = b.TrainedInterval(); return nil }); err != nil {
		return err
	}
	if trained > 0 && trained != interval {
		return &IntervalMismatchError{Policy: fmt.Sprintf("%T", pol), Trained: trained, Interval: interval}
	}
	return nil
}
