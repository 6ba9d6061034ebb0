package southboundtest_test

import (
	"context"
	"errors"
	"math"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/southboundtest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var testFlow = proflow.FlowID{
	Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("10.0.0.8"),
	SrcPort: 5001, DstPort: 5201, Proto: proflow.ProtoTCP,
}

func newFabric(t *testing.T) (*southboundtest.Fabric, *southboundtest.ManualClock) {
	t.Helper()
	clock := southboundtest.NewManualClock(epoch)
	return southboundtest.NewFabric(proflow.PaperTopology(), clock), clock
}

func TestFabricEnforcerConformance(t *testing.T) {
	southboundtest.TestEnforcer(t, func(t *testing.T) southboundtest.EnforcerHarness {
		f, _ := newFabric(t)
		return southboundtest.EnforcerHarness{
			Enforcer: f,
			Topology: f.Topology(),
			Flow:     testFlow,
			Where: func(context.Context) (int, error) {
				if sw, ok := f.Placement(testFlow); ok {
					return sw, nil
				}
				return -1, proflow.ErrNotPlaced
			},
			// The in-memory fabric is not a BatchEnforcer: ManyFlows drives it
			// through Place, one flow at a time.
			WhereFlow: func(_ context.Context, flow proflow.FlowID) (int, error) {
				if sw, ok := f.Placement(flow); ok {
					return sw, nil
				}
				return -1, proflow.ErrNotPlaced
			},
		}
	})
}

func TestFabricTelemetryConformance(t *testing.T) {
	southboundtest.TestTelemetry(t, func(t *testing.T) southboundtest.TelemetryHarness {
		f, clock := newFabric(t)
		f.SetSwitches(proflow.SwitchSample{TxRate: 1e6, OverflowRate: 2e4, FlowCount: 2, ElephantRate: 1e6})
		f.SetFlow(proflow.FlowSample{Throughput: 1e6})
		return southboundtest.TelemetryHarness{
			Telemetry: f,
			Topology:  f.Topology(),
			Advance:   func() { clock.Advance(proflow.DefaultInterval) },
		}
	})
}

func TestFabricCollectReportsSetValues(t *testing.T) {
	f, clock := newFabric(t)
	clock.Advance(time.Second)
	f.SetSwitch(1, proflow.SwitchSample{TxRate: 1, OverflowRate: 2, FlowCount: 3, ElephantRate: 4})
	f.SetLeaf(2, proflow.LeafSample{IngressRate: 5, TransmitRate: 6})
	f.SetFlow(proflow.FlowSample{Throughput: 7, CongestionRate: 8})

	var got proflow.Observation
	if err := f.Collect(t.Context(), &got); err != nil {
		t.Fatal(err)
	}
	want := proflow.Observation{
		Time:     epoch.Add(time.Second),
		Switches: []proflow.SwitchSample{{}, {TxRate: 1, OverflowRate: 2, FlowCount: 3, ElephantRate: 4}, {}, {}},
		Leaves:   []proflow.LeafSample{{}, {}, {IngressRate: 5, TransmitRate: 6}},
		Flow:     proflow.FlowSample{Throughput: 7, CongestionRate: 8},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Collect mismatch (-want +got):\n%s", diff)
	}
	if n := f.Collects(); n != 1 {
		t.Errorf("Collects() = %d, want 1", n)
	}
}

func TestFabricNaNIsJustAValue(t *testing.T) {
	f, _ := newFabric(t)
	f.SetSwitch(3, proflow.SwitchSample{OverflowRate: math.NaN()})
	var obs proflow.Observation
	if err := f.Collect(t.Context(), &obs); err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(obs.Switches[3].OverflowRate) {
		t.Errorf("overflow of agg4 = %v, want NaN", obs.Switches[3].OverflowRate)
	}
}

func TestFabricPanicsOnBadArguments(t *testing.T) {
	f, _ := newFabric(t)
	for name, set := range map[string]func(){
		"SetSwitch(-1)": func() { f.SetSwitch(-1, proflow.SwitchSample{}) },
		"SetSwitch(4)":  func() { f.SetSwitch(4, proflow.SwitchSample{}) },
		"SetLeaf(3)":    func() { f.SetLeaf(3, proflow.LeafSample{}) },
		"NewFabric with a nil *ManualClock": func() {
			southboundtest.NewFabric(proflow.PaperTopology(), (*southboundtest.ManualClock)(nil))
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic", name)
				}
			}()
			set()
		}()
	}
}

func TestFabricFailCollect(t *testing.T) {
	errDown := errors.New("agent down")
	f, _ := newFabric(t)
	f.FailCollect(2, errDown)
	var obs proflow.Observation
	for i := range 2 {
		if err := f.Collect(t.Context(), &obs); !errors.Is(err, errDown) {
			t.Errorf("Collect %d = %v, want an error wrapping %v", i+1, err, errDown)
		}
	}
	if err := f.Collect(t.Context(), &obs); err != nil {
		t.Errorf("Collect after two injected failures = %v, want nil", err)
	}

	f.FailCollect(-1, errDown)
	for range 5 {
		if err := f.Collect(t.Context(), &obs); !errors.Is(err, errDown) {
			t.Fatalf("Collect with FailCollect(-1) = %v, want %v", err, errDown)
		}
	}
	f.FailCollect(0, nil)
	if err := f.Collect(t.Context(), &obs); err != nil {
		t.Errorf("Collect after FailCollect(0, nil) = %v, want nil", err)
	}
	if n := f.Collects(); n != 9 {
		t.Errorf("Collects() = %d, want 9 (failures count)", n)
	}
}

func TestFabricStaleAndLag(t *testing.T) {
	f, clock := newFabric(t)
	var obs proflow.Observation
	collect := func() time.Time {
		t.Helper()
		if err := f.Collect(t.Context(), &obs); err != nil {
			t.Fatal(err)
		}
		return obs.Time
	}
	clock.Advance(time.Second)
	frozen := collect()
	f.SetStale(true)
	for range 3 {
		clock.Advance(time.Second)
		if got := collect(); !got.Equal(frozen) {
			t.Fatalf("stale sample time = %v, want frozen at %v", got, frozen)
		}
	}
	f.SetStale(false)
	if got, want := collect(), epoch.Add(4*time.Second); !got.Equal(want) {
		t.Errorf("sample time after stale mode = %v, want the clock's %v", got, want)
	}

	f.SetLag(3 * time.Second)
	if got, want := collect(), epoch.Add(time.Second); !got.Equal(want) {
		t.Errorf("sample time with a 3 s lag = %v, want %v", got, want)
	}
}

func TestFabricTamper(t *testing.T) {
	f, _ := newFabric(t)
	f.Tamper(func(obs *proflow.Observation) { obs.Switches = obs.Switches[:2] })
	var obs proflow.Observation
	if err := f.Collect(t.Context(), &obs); err != nil {
		t.Fatal(err)
	}
	if len(obs.Switches) != 2 {
		t.Fatalf("tampered observation has %d switch samples, want 2", len(obs.Switches))
	}
	if err := obs.Validate(f.Topology()); !errors.Is(err, proflow.ErrMissingSwitch) {
		t.Errorf("Validate of a tampered observation = %v, want ErrMissingSwitch", err)
	}
	f.Tamper(nil)
	if err := f.Collect(t.Context(), &obs); err != nil || len(obs.Switches) != 4 {
		t.Errorf("Collect after Tamper(nil) = %d switch samples, %v; want 4, nil", len(obs.Switches), err)
	}
}

func TestFabricFailPlace(t *testing.T) {
	errRefused := errors.New("flow-mod refused")
	f, _ := newFabric(t)
	ctx := t.Context()
	if err := f.Place(ctx, testFlow, 0); err != nil {
		t.Fatal(err)
	}
	f.FailPlace(1, errRefused)
	if err := f.Place(ctx, testFlow, 2); !errors.Is(err, errRefused) {
		t.Errorf("Place with an injected failure = %v, want %v", err, errRefused)
	}
	if sw, _ := f.Placement(testFlow); sw != 0 {
		t.Errorf("placement after a failed Place = %d, want 0 (unchanged)", sw)
	}
	if err := f.Place(ctx, testFlow, 2); err != nil {
		t.Errorf("Place after the injected failure = %v, want nil", err)
	}
	if sw, _ := f.Placement(testFlow); sw != 2 {
		t.Errorf("placement = %d, want 2", sw)
	}
	if n := f.Places(); n != 3 {
		t.Errorf("Places() = %d, want 3", n)
	}
	if err := f.Place(ctx, proflow.FlowID{}, 1); err == nil {
		t.Error("Place of the zero FlowID succeeded, want an error")
	}
}

func TestFabricBlockPlace(t *testing.T) {
	f, _ := newFabric(t)
	if err := f.Place(t.Context(), testFlow, 0); err != nil {
		t.Fatal(err)
	}
	f.BlockPlace(true)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- f.Place(ctx, testFlow, 3) }()
	select {
	case err := <-done:
		t.Fatalf("blocked Place returned %v before its context ended", err)
	case <-time.After(10 * time.Millisecond):
	}
	// The fabric stays usable while a Place hangs.
	var obs proflow.Observation
	if err := f.Collect(t.Context(), &obs); err != nil {
		t.Fatalf("Collect during a blocked Place: %v", err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("blocked Place after cancel = %v, want context.Canceled", err)
	}
	if sw, _ := f.Placement(testFlow); sw != 0 {
		t.Errorf("placement after a blocked Place = %d, want 0", sw)
	}
	f.BlockPlace(false)
	if err := f.Place(t.Context(), testFlow, 3); err != nil {
		t.Errorf("Place after BlockPlace(false) = %v", err)
	}
}

func TestFabricLocateNotPlaced(t *testing.T) {
	f, _ := newFabric(t)
	if _, err := f.Locate(t.Context(), testFlow); !errors.Is(err, proflow.ErrNotPlaced) {
		t.Errorf("Locate of an unplaced flow = %v, want ErrNotPlaced", err)
	}
	if sw, ok := f.Placement(testFlow); ok || sw != -1 {
		t.Errorf("Placement of an unplaced flow = %d, %v; want -1, false", sw, ok)
	}
}

func TestFabricConcurrent(t *testing.T) {
	f, clock := newFabric(t)
	var wg sync.WaitGroup
	worker := func(fn func(i int)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				fn(i)
			}
		}()
	}
	worker(func(i int) {
		var obs proflow.Observation
		_ = f.Collect(context.Background(), &obs)
	})
	worker(func(i int) { _ = f.Place(context.Background(), testFlow, i%4) })
	worker(func(i int) { _, _ = f.Locate(context.Background(), testFlow) })
	worker(func(i int) {
		f.SetSwitch(i%4, proflow.SwitchSample{FlowCount: float64(i)})
		f.SetLeaf(i%3, proflow.LeafSample{IngressRate: float64(i)})
		f.SetFlow(proflow.FlowSample{Throughput: float64(i)})
		f.SetStale(i%2 == 0)
		clock.Advance(time.Millisecond)
	})
	wg.Wait()
	if f.Collects() != 200 || f.Places() != 200 {
		t.Errorf("Collects, Places = %d, %d; want 200, 200", f.Collects(), f.Places())
	}
}
