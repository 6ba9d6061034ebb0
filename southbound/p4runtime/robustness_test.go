package p4runtime

import (
	"errors"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/southboundtest"
)

func TestClosedClient(t *testing.T) {
	f, c, ctx := placed(t, 1)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	var obs proflow.Observation
	obs.Resize(c.cfg.Topology)
	check := func(name string, err error) {
		t.Helper()
		if !errors.Is(err, ErrClosed) || errors.Is(err, ErrNotPrimary) {
			t.Errorf("%s after Close: %v, want ErrClosed (and not ErrNotPrimary)", name, err)
		}
	}
	check("Place", c.Place(ctx, testFlow, 2))
	check("Remove", c.Remove(ctx, testFlow))
	_, err := c.Locate(ctx, testFlow)
	check("Locate", err)
	check("Collect", c.Collect(ctx, &obs))
	check("Overlay", c.Overlay(ctx, &obs))
	if got, _ := f.where(testFlow); got != 1 {
		t.Errorf("after calls on a closed client the flow is on %d, want 1", got)
	}
}

func TestConfigRejectsFlowWithinOneLeaf(t *testing.T) {
	f := newFabric(t, nil)
	cfg := f.config(1)
	cfg.Flow.Dst = netip.MustParseAddr("10.0.1.2") // also behind leaf1
	err := cfg.Validate()
	if err == nil || !strings.Contains(err.Error(), "both hosts of leaf leaf1") || !errors.Is(err, proflow.ErrNotInFabric) {
		t.Errorf("Validate of a flow within leaf1: %v, want an error naming the shared leaf, wrapping proflow.ErrNotInFabric", err)
	}
	cfg.Flow.Dst = netip.MustParseAddr("10.0.2.2")
	if err := cfg.Validate(); err != nil {
		t.Errorf("Validate of a flow across leaves: %v", err)
	}
	cfg.Clock = (*southboundtest.ManualClock)(nil)
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "clock is a nil *southboundtest.ManualClock") {
		t.Errorf("Validate with a typed-nil clock: %v, want an error naming it", err)
	}
}

// TestValidateFlow asks a client about flows it could and could not place;
// a controller built on it (proflow.NewController) asks the same.
func TestValidateFlow(t *testing.T) {
	f := newFabric(t, nil)
	cfg := f.config(1)
	c := dial(t, cfg)
	flow := func(src, dst string) proflow.FlowID {
		fl := testFlow
		fl.Src, fl.Dst = netip.MustParseAddr(src), netip.MustParseAddr(dst)
		return fl
	}
	southboundtest.TestFlowValidator(t, southboundtest.FlowValidatorHarness{
		Enforcer: c, Topology: cfg.Topology,
		Valid:   []proflow.FlowID{testFlow, flow("10.0.4.1", "10.0.1.1")},
		Outside: []proflow.FlowID{flow("10.0.1.1", "10.9.0.1"), flow("10.8.0.1", "10.9.0.1"), flow("10.0.3.1", "10.0.3.2")},
	})
	for _, tc := range []struct {
		flow proflow.FlowID
		want string
	}{
		{flow("10.0.1.1", "10.9.0.1"), "p4runtime: flow tcp 10.0.1.1:5001->10.9.0.1:5201: no leaf hosts address 10.9.0.1"},
		{flow("10.0.3.1", "10.0.3.2"), "both hosts of leaf leaf3"},
		{flow("fd00::1", "fd00::2"), "p4runtime: flow tcp [fd00::1]:5001->[fd00::2]:5201 is IPv6; leaf.p4 matches IPv4 only"},
	} {
		if err := c.ValidateFlow(tc.flow); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ValidateFlow(%v) = %v, want an error containing %q", tc.flow, err, tc.want)
		}
	}
}

func TestSetPathRetryKeepsBothErrors(t *testing.T) {
	var failRead atomic.Bool
	f := newFabric(t, nil, grpc.StreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		if info.FullMethod == "/p4.v1.P4Runtime/Read" && failRead.Load() {
			return status.Error(codes.Unavailable, "injected read failure")
		}
		return h(srv, ss)
	}))
	c := dial(t, f.config(10))
	ctx, cancel := ctxT(t)
	defer cancel()
	dirs, err := c.directions(testFlow)
	if err != nil {
		t.Fatal(err)
	}
	d := dirs[0]
	lib, gen, err := d.s.ensureReady(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The client learns there is no entry; then the entry appears behind
	// its back, so its INSERT meets ALREADY_EXISTS, and the read it retries
	// with fails.
	if st, err := c.current(ctx, d, gen); err != nil || st.present {
		t.Fatalf("current = %+v, %v; want no entry", st, err)
	}
	if err := lib.InsertTableEntry(ctx, c.pathEntry(lib, d.flow, firstUplink)); err != nil {
		t.Fatal(err)
	}
	failRead.Store(true)
	_, _, err = c.setPath(ctx, d, firstUplink+1)
	var de *DeviceError
	if !errors.As(err, &de) || de.Code != codes.AlreadyExists {
		t.Errorf("setPath: %v, want the INSERT's ALREADY_EXISTS DeviceError", err)
	}
	if err == nil || !strings.Contains(err.Error(), "injected read failure") {
		t.Errorf("setPath: %v, want the failed re-read reported too", err)
	}
}

func TestArbWatchdog(t *testing.T) {
	cancelled := 0
	late := &arbWatchdog{cancel: func() { cancelled++ }}
	late.answer()
	late.fire() // the timer fires just after the answer arrived
	if cancelled != 0 || late.expired() {
		t.Errorf("timer after an answer: cancelled %d times, expired %v; want the stream left alone", cancelled, late.expired())
	}
	silent := &arbWatchdog{cancel: func() { cancelled++ }}
	silent.fire()
	if cancelled != 1 || !silent.expired() {
		t.Errorf("timer without an answer: cancelled %d times, expired %v; want the stream ended as timed out", cancelled, silent.expired())
	}
}
