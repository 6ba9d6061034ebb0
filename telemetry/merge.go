package telemetry

import (
	"context"
	"fmt"

	"github.com/proflow-sdn/proflow"
)

// Overlay is a telemetry source that provides only some fields of an
// observation, such as the token-bucket overflow rates a tc agent reports.
// Overlay writes the fields it owns into obs, which another source has
// already filled and sized for the topology, and leaves every other field as
// it is. Like Telemetry.Collect it should not allocate, and it should wrap
// proflow.ErrStale for counters that did not advance.
type Overlay interface {
	Overlay(ctx context.Context, obs *proflow.Observation) error
}

// OverlayFunc adapts a function to Overlay.
type OverlayFunc func(ctx context.Context, obs *proflow.Observation) error

// Overlay calls f(ctx, obs).
func (f OverlayFunc) Overlay(ctx context.Context, obs *proflow.Observation) error { return f(ctx, obs) }

// Merge returns a Telemetry that builds one observation from several
// sources: primary collects a complete sample (for example switch statistics
// from a southbound), then each overlay, in order, overwrites the fields it
// owns (for example overflow rates from a tc agent). Sources run one after
// the other on the caller's goroutine, so a later overlay wins where two
// write the same field. Collect stops at the first error and wraps it naming
// the source: index 0 is primary, index i+1 is overlays[i]; errors.Is still
// finds proflow.ErrStale behind it.
//
// When primary is a proflow.Peeker, so is the returned Telemetry: its Peek
// peeks primary alone, so the fields the overlays own are primary's there
// (an overlay's reading ends its own sample, which a peek must not).
//
// Merge returns an error if primary or an overlay is nil. The returned
// Telemetry is as safe for concurrent use as its sources are.
func Merge(primary proflow.Telemetry, overlays ...Overlay) (proflow.Telemetry, error) {
	if primary == nil {
		return nil, fmt.Errorf("telemetry: merge: primary source is nil, want a proflow.Telemetry")
	}
	for i, o := range overlays {
		if o == nil {
			return nil, fmt.Errorf("telemetry: merge: overlay %d (source %d) is nil, want an Overlay", i, i+1)
		}
	}
	m := &merged{primary: primary, overlays: append([]Overlay(nil), overlays...)}
	if p, ok := primary.(proflow.Peeker); ok {
		return &peekMerged{merged: m, peek: p}, nil
	}
	return m, nil
}

// peekMerged is a merged Telemetry whose primary can peek.
type peekMerged struct {
	*merged
	peek proflow.Peeker
}

// Peek implements proflow.Peeker: primary's peek alone.
func (m *peekMerged) Peek(ctx context.Context, obs *proflow.Observation) error {
	if err := m.peek.Peek(ctx, obs); err != nil {
		return fmt.Errorf("telemetry: merge: source 0 (primary): peek: %w", err)
	}
	return nil
}

type merged struct {
	primary  proflow.Telemetry
	overlays []Overlay
}

func (m *merged) Collect(ctx context.Context, obs *proflow.Observation) error {
	if err := m.primary.Collect(ctx, obs); err != nil {
		return fmt.Errorf("telemetry: merge: source 0 (primary): %w", err)
	}
	for i, o := range m.overlays {
		if err := o.Overlay(ctx, obs); err != nil {
			return fmt.Errorf("telemetry: merge: source %d (overlay %d): %w", i+1, i, err)
		}
	}
	return nil
}
