package openflow_test

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/openflow"
	"github.com/proflow-sdn/proflow/southbound/openflow/internal/fakeswitch"
)

// overrideRules returns the rules of sw above base priority.
func overrideRules(sw *fakeswitch.Switch) []fakeswitch.Entry {
	var out []fakeswitch.Entry
	for _, e := range sw.Flows() {
		if e.Priority > 200 {
			out = append(out, e)
		}
	}
	return out
}

// portFlow is fp with source port p.
func portFlow(p uint16) proflow.FlowID {
	f := fp
	f.SrcPort = p
	return f
}

func TestRelease(t *testing.T) {
	tb := newTestbed(t, nil)
	tb.ready()
	ctx := ctxT(t, 5*time.Second)
	a, b, c := portFlow(1), portFlow(2), portFlow(3)
	base := tb.bothWays(a) // every port of h1→h8 takes the host pair's base path
	leaf1, leaf4 := tb.sw["leaf1"], tb.sw["leaf4"]
	baseRules := len(leaf1.Flows())
	errs := make([]error, 3)
	if err := tb.srv.PlaceBatch(ctx, []proflow.Placement{{Flow: a, Switch: 1}, {Flow: b, Switch: 2}, {Flow: c, Switch: 3}}, errs); err != nil || errors.Join(errs...) != nil {
		t.Fatalf("PlaceBatch: %v %v", err, errs)
	}
	if n := len(overrideRules(leaf1)); n != 3 {
		t.Fatalf("leaf1 holds %d overrides after placing 3 flows, want 3", n)
	}

	if err := tb.srv.Release(ctx, b); err != nil {
		t.Fatalf("Release(%v): %v", b, err)
	}
	for name, sw := range map[string]*fakeswitch.Switch{"leaf1": leaf1, "leaf4": leaf4} {
		for _, e := range overrideRules(sw) {
			if e.OutPort == 3 {
				t.Errorf("%s still holds an override to agg3 after the release: %+v", name, e)
			}
		}
		if n := len(overrideRules(sw)); n != 2 {
			t.Errorf("%s holds %d overrides after releasing one of 3 flows, want 2 (the others untouched)", name, n)
		}
	}
	if n := len(leaf1.Flows()); n != baseRules+2 {
		t.Errorf("leaf1 holds %d rules, want its %d base rules and 2 overrides", n, baseRules)
	}
	if got := tb.bothWays(b); got != base {
		t.Errorf("released flow goes via %s, want its base path %s", got, base)
	}
	if got, want := tb.bothWays(a), "agg2"; got != want {
		t.Errorf("flow a goes via %s after releasing b, want %s", got, want)
	}
	if got, want := tb.bothWays(c), "agg4"; got != want {
		t.Errorf("flow c goes via %s after releasing b, want %s", got, want)
	}
	if _, err := tb.srv.Locate(ctx, b); !errors.Is(err, proflow.ErrNotPlaced) {
		t.Errorf("Locate after the release: %v, want ErrNotPlaced", err)
	}
	// Nothing installed: not an error, and nothing sent.
	mods := leaf1.FlowMods()
	if err := tb.srv.Release(ctx, b); err != nil {
		t.Errorf("second Release: %v, want nil", err)
	}
	if err := tb.srv.Release(ctx, portFlow(99)); err != nil {
		t.Errorf("Release of a flow never placed: %v, want nil", err)
	}
	if leaf1.FlowMods() != mods {
		t.Errorf("releasing flows with nothing installed sent %d flow-mods, want none", leaf1.FlowMods()-mods)
	}
}

func TestCollectFlows(t *testing.T) {
	tb := newTestbed(t, nil)
	tb.ready()
	ctx := ctxT(t, 5*time.Second)
	a, b := portFlow(1), portFlow(2)
	c := proflow.FlowID{Src: h3, Dst: h7, Proto: proflow.ProtoTCP, SrcPort: 7, DstPort: 8} // on its base path
	for _, p := range []proflow.Placement{{Flow: a, Switch: 1}, {Flow: b, Switch: 2}} {
		if err := tb.srv.Place(ctx, p.Flow, p.Switch); err != nil {
			t.Fatal(err)
		}
	}
	obs := &proflow.Observation{FlowIDs: []proflow.FlowID{a, b, c}}
	if err := tb.srv.Collect(ctx, obs); !errors.Is(err, proflow.ErrStale) {
		t.Fatalf("first Collect: %v, want ErrStale (rates need two samples)", err)
	}
	send := func(f proflow.FlowID, n int, size uint64) {
		for range n {
			tb.path(f, size)
		}
	}
	send(a, 100, 1000) // 100 kB/s
	send(b, 50, 1000)  // 50 kB/s
	send(c, 20, 1000)  // 20 kB/s, counted by its host pair's base rule
	tb.clock.Advance(time.Second)
	if err := tb.srv.Collect(ctx, obs); err != nil {
		t.Fatal(err)
	}
	want := []float64{100000, 50000, 20000}
	for i, w := range want {
		if got := obs.Flows[i].Throughput; got != w {
			t.Errorf("Flows[%d] (%v) throughput %v B/s, want %v", i, obs.FlowIDs[i], got, w)
		}
	}
	// λ counts congestion traffic only: leaf1 sends a and b (both
	// protected), leaf2 sends c (protected too).
	for i, l := range obs.Leaves {
		if l.IngressRate != 0 {
			t.Errorf("leaf %s ingress %v, want 0: every flow sent is protected", tb.cfg.Topology.Leaves[i], l.IngressRate)
		}
	}
	for i, f := range obs.Flows {
		if f.CongestionRate != obs.Flow.CongestionRate {
			t.Errorf("Flows[%d] congestion rate %v, want the fabric-wide %v", i, f.CongestionRate, obs.Flow.CongestionRate)
		}
	}
	if err := obs.Validate(tb.cfg.Topology); err != nil {
		t.Error(err)
	}

	// A move in the interval: the new rule counts from zero, the old one's
	// bytes before the move count too.
	send(a, 30, 1000)
	if err := tb.srv.Place(ctx, a, 3); err != nil {
		t.Fatal(err)
	}
	send(a, 40, 1000)
	tb.clock.Advance(time.Second)
	if err := tb.srv.Collect(ctx, obs); err != nil {
		t.Fatal(err)
	}
	if got := obs.Flows[0].Throughput; got != 40000 {
		// The old rule was deleted with its counter; only the new one counts.
		t.Errorf("after a move: throughput %v, want 40000 (the new rule's bytes)", got)
	}
	if got := obs.Flows[1].Throughput; got != 0 {
		t.Errorf("idle flow b: throughput %v, want 0", got)
	}

	// A flow with no rule on the fabric.
	bad := proflow.FlowID{Src: h1, Dst: netipMust("10.9.9.9"), Proto: proflow.ProtoTCP, SrcPort: 1, DstPort: 2}
	obs.FlowIDs = append(obs.FlowIDs, bad)
	tb.clock.Advance(time.Second)
	err := tb.srv.Collect(ctx, obs)
	if !errors.Is(err, proflow.ErrNotInFabric) {
		t.Errorf("Collect with %v listed: %v, want an error wrapping ErrNotInFabric", bad, err)
	}
	t.Logf("error for a flow outside the fabric: %v", err)
}

// owner is a test Owner: one cookie for every flow, and a fence.
type owner struct {
	mu     sync.Mutex
	cookie uint64
	fenced bool
}

func (o *owner) set(cookie uint64, fenced bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.cookie, o.fenced = cookie, fenced
}

func (o *owner) OwnerCookie(proflow.FlowID) (uint64, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.cookie, !o.fenced
}

func TestOwnerCookies(t *testing.T) {
	const epoch1, epoch2 = 3<<48 | 100, 3<<48 | 200 // shard 3, two epochs
	own := &owner{cookie: epoch1}
	tb := newTestbed(t, func(c *openflow.Config) { c.Owner = own })
	tb.ready()
	ctx := ctxT(t, 5*time.Second)
	leaf1, leaf4 := tb.sw["leaf1"], tb.sw["leaf4"]
	a, b := portFlow(1), portFlow(2)
	if err := tb.srv.Place(ctx, a, 1); err != nil {
		t.Fatal(err)
	}
	for name, sw := range map[string]*fakeswitch.Switch{"leaf1": leaf1, "leaf4": leaf4} {
		for _, e := range overrideRules(sw) {
			if e.Cookie != epoch1 {
				t.Errorf("%s override cookie %#x, want the owner's %#x", name, e.Cookie, uint64(epoch1))
			}
		}
	}
	// Telemetry finds the owner's rules.
	obs := &proflow.Observation{FlowIDs: []proflow.FlowID{a}}
	_ = tb.srv.Collect(ctx, obs)
	tb.clock.Advance(time.Second)
	for range 10 {
		tb.path(a, 1000)
	}
	tb.clock.Advance(time.Second)
	if err := tb.srv.Collect(ctx, obs); err != nil {
		t.Fatal(err)
	}
	if obs.Flows[0].Throughput != 5000 {
		t.Errorf("throughput %v B/s, want 5000 from the override with the owner's cookie", obs.Flows[0].Throughput)
	}

	// Fenced: every write is refused, nothing is sent.
	own.set(epoch1, true)
	mods := leaf1.FlowMods()
	if err := tb.srv.Place(ctx, a, 2); !errors.Is(err, openflow.ErrFenced) {
		t.Errorf("fenced Place: %v, want ErrFenced", err)
	}
	errs := make([]error, 2)
	_ = tb.srv.PlaceBatch(ctx, []proflow.Placement{{Flow: a, Switch: 2}, {Flow: b, Switch: 2}}, errs)
	for i, err := range errs {
		if !errors.Is(err, openflow.ErrFenced) {
			t.Errorf("fenced PlaceBatch slot %d: %v, want ErrFenced", i, err)
		}
	}
	if err := tb.srv.Release(ctx, a); !errors.Is(err, openflow.ErrFenced) {
		t.Errorf("fenced Release: %v, want ErrFenced", err)
	}
	t.Logf("fenced: %v", tb.srv.Release(ctx, a))
	if n := leaf1.FlowMods() - mods; n != 0 {
		t.Errorf("a fenced server sent %d flow-mods, want none", n)
	}
	if got := tb.bothWays(a); got != "agg2" {
		t.Errorf("after refused writes the flow goes via %s, want agg2", got)
	}

	// A newer owner takes the rule over (an add with the same match and
	// priority, its own cookie). The stale owner, unfenced by mistake,
	// deletes with its own cookie only: the newer owner's rule stays.
	for _, sw := range []*fakeswitch.Switch{leaf1, leaf4} {
		for _, e := range overrideRules(sw) {
			e.Cookie = epoch2
			sw.Install(e)
		}
	}
	own.set(epoch1, false)
	if err := tb.srv.Release(ctx, a); err != nil {
		t.Fatalf("stale Release: %v", err)
	}
	for name, sw := range map[string]*fakeswitch.Switch{"leaf1": leaf1, "leaf4": leaf4} {
		if o := overrideRules(sw); len(o) != 1 || o[0].Cookie != epoch2 {
			t.Errorf("%s overrides after a stale owner's release: %+v, want the newer owner's rule (cookie %#x) untouched", name, o, uint64(epoch2))
		}
	}
	if got := tb.bothWays(a); got != "agg2" {
		t.Errorf("after the stale release the flow goes via %s, want agg2 (the newer owner's rule)", got)
	}
}

func TestOwnerTakeover(t *testing.T) {
	const epoch1, epoch2 = 3<<48 | 100, 3<<48 | 200
	own := &owner{cookie: epoch1}
	tb := newTestbed(t, func(c *openflow.Config) { c.Owner = own })
	tb.ready()
	ctx := ctxT(t, 10*time.Second)
	a := portFlow(1)
	if err := tb.srv.Place(ctx, a, 1); err != nil {
		t.Fatal(err)
	}
	// The next owner: a fresh server (a replica that gained the shard)
	// locates the flow, adopting the old owner's rules, and moves it.
	own.set(epoch2, false)
	tb.restartServer()
	tb.ready()
	if k, err := tb.srv.Locate(ctx, a); err != nil || k != 1 {
		t.Fatalf("new owner's Locate = %d, %v; want 1 (agg2)", k, err)
	}
	for _, name := range []string{"leaf1", "leaf4"} {
		o := overrideRules(tb.sw[name])
		if len(o) != 1 || o[0].Cookie != epoch2 || o[0].OutPort != 2 {
			t.Errorf("%s overrides after the new owner's Locate: %+v, want the rule to agg2 re-stamped with cookie %#x", name, o, uint64(epoch2))
		}
	}
	if err := tb.srv.Place(ctx, a, 2); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"leaf1", "leaf4"} {
		o := overrideRules(tb.sw[name])
		if len(o) != 1 || o[0].Cookie != epoch2 || o[0].OutPort != 3 {
			t.Errorf("%s overrides after the takeover and move: %+v, want one to agg3 with cookie %#x (the old owner's deleted)", name, o, uint64(epoch2))
		}
	}
	if got := tb.bothWays(a); got != "agg3" {
		t.Errorf("flow goes via %s, want agg3", got)
	}
}

// With Config.Owner, Locate finds rules by match, so Locate of a placed
// flow's reverse reads the flow's own rules: it fails and adopts nothing
// (one direction per connection is placed), so the flow's rules have one
// placement, which Release removes for good.
func TestLocateRefusesReverseOfPlaced(t *testing.T) {
	own := &owner{cookie: 3<<48 | 100}
	tb := newTestbed(t, func(c *openflow.Config) { c.Owner = own })
	tb.ready()
	ctx := ctxT(t, 5*time.Second)
	a := portFlow(1)
	if err := tb.srv.Place(ctx, a, 1); err != nil {
		t.Fatal(err)
	}
	k, err := tb.srv.Locate(ctx, a.Reverse())
	if err == nil || !strings.Contains(err.Error(), "one direction per connection") {
		t.Errorf("Locate of a placed flow's reverse = %d, %v; want a refusal: one direction per connection is placed", k, err)
	}
	if err := tb.srv.Release(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := tb.srv.Place(ctx, a.Reverse(), 2); err != nil {
		t.Errorf("Place of the reverse once the flow is released: %v, want nil (nothing adopted it)", err)
	}
}
