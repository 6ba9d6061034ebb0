package telemetry_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/telemetry"
)

var sampleTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// southbound stands in for switch statistics: it sizes the observation and
// fills transmit rates and flow counts, and an overflow of 1 it does not own.
func southbound(topo proflow.Topology) proflow.TelemetryFunc {
	return func(_ context.Context, o *proflow.Observation) error {
		o.Resize(topo)
		o.Time = sampleTime
		for k := range o.Switches {
			o.Switches[k].TxRate = float64(1000 * (k + 1))
			o.Switches[k].FlowCount = float64(2 * (k + 1))
			o.Switches[k].OverflowRate = 1
		}
		o.Flow.Throughput = 900
		return nil
	}
}

// tcAgent stands in for the per-node overflow agent.
func tcAgent(_ context.Context, o *proflow.Observation) error {
	for k := range o.Switches {
		o.Switches[k].OverflowRate = float64(100 * (k + 1))
	}
	return nil
}

func TestMerge(t *testing.T) {
	topo := proflow.Topology{Switches: []string{"a", "b"}, Leaves: []string{"l"}, BucketRate: 1}
	elephants := telemetry.OverlayFunc(func(_ context.Context, o *proflow.Observation) error {
		o.Switches[1].ElephantRate = 700
		o.Leaves[0].IngressRate = 50
		return nil
	})
	tel, err := telemetry.Merge(southbound(topo), telemetry.OverlayFunc(tcAgent), elephants)
	if err != nil {
		t.Fatal(err)
	}

	var got proflow.Observation
	got.Resize(topo)
	got.Switches[0].ElephantRate = 99 // stale value from the previous step: primary's Resize clears it
	if err := tel.Collect(context.Background(), &got); err != nil {
		t.Fatal(err)
	}
	want := proflow.Observation{
		Time: sampleTime,
		Switches: []proflow.SwitchSample{
			{TxRate: 1000, OverflowRate: 100, FlowCount: 2},
			{TxRate: 2000, OverflowRate: 200, FlowCount: 4, ElephantRate: 700},
		},
		Leaves: []proflow.LeafSample{{IngressRate: 50}},
		Flow:   proflow.FlowSample{Throughput: 900},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("merged observation (-want +got):\n%s", diff)
	}
	if err := got.Validate(topo); err != nil {
		t.Errorf("merged observation invalid: %v", err)
	}

	allocs := testing.AllocsPerRun(50, func() {
		if err := tel.Collect(context.Background(), &got); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Collect allocates %v times per call, want 0", allocs)
	}
}

func TestMergeErrors(t *testing.T) {
	topo := proflow.Topology{Switches: []string{"a", "b"}, BucketRate: 1}
	stale := fmt.Errorf("tc agent on a: overlimits did not advance: %w", proflow.ErrStale)
	boom := errors.New("connection refused")
	for _, tc := range []struct {
		name    string
		primary proflow.Telemetry
		fail    int // index of the failing overlay, -1 for none
		err     error
		want    string
		ran     int // overlays that must have run
	}{
		{"primary", proflow.TelemetryFunc(func(context.Context, *proflow.Observation) error { return boom }), -1, nil,
			"telemetry: merge: source 0 (primary): connection refused", 0},
		{"first overlay stale", southbound(topo), 0, stale,
			"telemetry: merge: source 1 (overlay 0): tc agent on a: overlimits did not advance: stale telemetry sample", 1},
		{"second overlay", southbound(topo), 1, boom,
			"telemetry: merge: source 2 (overlay 1): connection refused", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ran := 0
			overlays := make([]telemetry.Overlay, 3)
			for i := range overlays {
				overlays[i] = telemetry.OverlayFunc(func(context.Context, *proflow.Observation) error {
					ran++
					if i == tc.fail {
						return tc.err
					}
					return nil
				})
			}
			var o proflow.Observation
			tel, err := telemetry.Merge(tc.primary, overlays...)
			if err != nil {
				t.Fatal(err)
			}
			err = tel.Collect(context.Background(), &o)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("Collect() = %v\nwant %q", err, tc.want)
			}
			if tc.err == stale && !errors.Is(err, proflow.ErrStale) {
				t.Errorf("errors.Is(%v, ErrStale) = false", err)
			}
			if !errors.Is(err, boom) && !errors.Is(err, proflow.ErrStale) {
				t.Errorf("error %v does not wrap the source's error", err)
			}
			if ran != tc.ran {
				t.Errorf("%d overlays ran, want %d (Collect stops at the first error)", ran, tc.ran)
			}
		})
	}
}

func TestMergeNilSource(t *testing.T) {
	for _, tc := range []struct {
		name      string
		primary   proflow.Telemetry
		overlays  []telemetry.Overlay
		wantError string
	}{
		{"nil primary", nil, nil, "telemetry: merge: primary source is nil, want a proflow.Telemetry"},
		{"nil overlay", southbound(proflow.PaperTopology()), []telemetry.Overlay{telemetry.OverlayFunc(tcAgent), nil},
			"telemetry: merge: overlay 1 (source 2) is nil, want an Overlay"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tel, err := telemetry.Merge(tc.primary, tc.overlays...)
			if err == nil || err.Error() != tc.wantError || tel != nil {
				t.Errorf("Merge() = %v, %v; want nil, %q", tel, err, tc.wantError)
			}
		})
	}
}

// peekSource is a primary that can also peek: its peek reads the transmit
// rates halved, or fails.
type peekSource struct {
	proflow.TelemetryFunc
	topo proflow.Topology
	err  error
}

func (p peekSource) Peek(ctx context.Context, o *proflow.Observation) error {
	if p.err != nil {
		return p.err
	}
	if err := p.TelemetryFunc(ctx, o); err != nil {
		return err
	}
	for k := range o.Switches {
		o.Switches[k].TxRate /= 2
	}
	return nil
}

// A merge whose primary peeks peeks it alone; one whose primary does not
// is no Peeker.
func TestMergePeek(t *testing.T) {
	topo := proflow.Topology{Switches: []string{"a", "b"}, Leaves: []string{"l"}, BucketRate: 1}
	overlays := 0
	count := telemetry.OverlayFunc(func(context.Context, *proflow.Observation) error { overlays++; return nil })
	tel, err := telemetry.Merge(peekSource{TelemetryFunc: southbound(topo), topo: topo}, telemetry.OverlayFunc(tcAgent), count)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := tel.(proflow.Peeker)
	if !ok {
		t.Fatalf("%T is no Peeker, want one over a primary that peeks", tel)
	}
	var got proflow.Observation
	if err := p.Peek(context.Background(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Switches[1].TxRate != 1000 || got.Switches[1].OverflowRate != 1 || overlays != 0 {
		t.Errorf("peek: agg b %+v, %d overlay calls; want the primary's peek (tx 1000, overflow 1) and no overlay", got.Switches[1], overlays)
	}
	if err := tel.Collect(context.Background(), &got); err != nil || got.Switches[1].OverflowRate != 200 || overlays != 1 {
		t.Errorf("Collect after the peek: %v, overflow %v, %d overlay calls; want the overlays' reading", err, got.Switches[1].OverflowRate, overlays)
	}
	failing, _ := telemetry.Merge(peekSource{TelemetryFunc: southbound(topo), topo: topo, err: proflow.ErrStale})
	if err := failing.(proflow.Peeker).Peek(context.Background(), &got); !errors.Is(err, proflow.ErrStale) || !strings.Contains(err.Error(), "source 0 (primary): peek") {
		t.Errorf("failed peek: %v, want ErrStale naming the primary", err)
	}
	plain, _ := telemetry.Merge(southbound(topo), telemetry.OverlayFunc(tcAgent))
	if _, ok := plain.(proflow.Peeker); ok {
		t.Errorf("%T peeks over a primary that cannot", plain)
	}
}
