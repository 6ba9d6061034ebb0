// Command p4fabric runs a ProFlow controller against the simulated fabric
// through P4Runtime, over real gRPC, and compares the episode with the same
// one run directly on the simulator.
//
// The leaves are P4Runtime devices served by package target on 127.0.0.1,
// with the simulator as their data plane (package simdp): the controller's
// p4runtime client pushes leaf.p4's pipeline, arbitrates as primary and
// moves the protected flow by writing path_select entries; the simulator
// follows the entries and the client reads its counters. Telemetry merges
// the simulator (overflow rates, flow counts, elephants: what a tc agent
// and the aggregation switches' flow tables give) with the P4Runtime
// counters (transmit rates, leaf rates, the flow's throughput) overlaid on
// top. The controller steps on the simulator's virtual clock: advance one
// interval, then step.
//
//	go run ./examples/p4fabric                      # S1, crowd policy, seed 1
//	go run ./examples/p4fabric -scenario S7 -policy reactive -seed 3
//	go run ./examples/p4fabric -policy agent        # with models/default.safetensors
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/netip"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/policy/eval"
	"github.com/proflow-sdn/proflow/southbound/p4runtime"
	"github.com/proflow-sdn/proflow/southbound/p4runtime/p4"
	"github.com/proflow-sdn/proflow/southbound/p4runtime/simdp"
	"github.com/proflow-sdn/proflow/southbound/p4runtime/target"
	"github.com/proflow-sdn/proflow/southbound/sim"
	"github.com/proflow-sdn/proflow/telemetry"
	"github.com/proflow-sdn/proflow/telemetry/trace"
)

// defaultModel is the committed default agent, relative to the repository root.
const defaultModel = "models/default.safetensors"

// electionID is the controller's P4Runtime election ID.
var electionID = p4runtime.ElectionID{Low: 10}

// defaultOptions are the flags' defaults: the run the README shows.
func defaultOptions() options {
	return options{Scenario: "S1", Seed: 1, Policy: "crowd", Model: defaultModel, Profile: sim.DefaultProfile}
}

func main() {
	o := defaultOptions()
	flag.StringVar(&o.Scenario, "scenario", o.Scenario, "built-in scenario: "+strings.Join(sim.BuiltinScenarios(), ", "))
	flag.Uint64Var(&o.Seed, "seed", o.Seed, "seed of the simulated episode (both runs use it)")
	flag.StringVar(&o.Policy, "policy", o.Policy, "policy: crowd, reactive, static, or agent (the learned agent of -model)")
	flag.StringVar(&o.Model, "model", o.Model, "model file of the agent policy")
	flag.BoolVar(&o.Verbose, "v", o.Verbose, "log every decision of the controller over P4Runtime")
	flag.StringVar(&o.Profile, "profile", o.Profile, "simulated world: "+strings.Join(sim.Profiles(), ", ")+", or a profile JSON file")
	flag.Parse()
	if _, err := run(context.Background(), o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "p4fabric:", err)
		os.Exit(1)
	}
}

type options struct {
	Scenario string
	Seed     uint64
	Policy   string
	Model    string
	Verbose  bool
	// Profile names the simulated world (sim.LoadProfile); empty means
	// sim.DefaultConfig, the datacenter profile.
	Profile string
}

// result is what run measured.
type result struct {
	// GRPC and Direct are the two runs' episodes, as the evaluation sees
	// them, and their summaries.
	GRPC, Direct         *eval.Episode
	GRPCCell, DirectCell eval.Cell
	// Held counts the steps of the P4Runtime run that held the placement
	// because of an error (telemetry, encoder, policy or enforcer).
	Held int
	// Entries are the controller's path_select entries read back over
	// P4Runtime at the end of the run.
	Entries []pathEntry
	// Forward and Reverse are the switches the data plane's entries select;
	// Final is where the simulator carries the flow at the end.
	Forward, Reverse, Final int
	Topology                proflow.Topology
	Flow                    proflow.FlowID
	Leaves                  []p4runtime.Leaf
}

func run(ctx context.Context, o options, out io.Writer) (*result, error) {
	cfg := sim.DefaultConfig()
	if o.Profile != "" {
		var err error
		if cfg, err = sim.LoadProfile(o.Profile); err != nil {
			return nil, err
		}
	}
	sc, err := sim.BuiltinScenario(o.Scenario)
	if err != nil {
		return nil, err
	}
	spec, err := policySpec(o.Policy, o.Model, cfg.Topology())
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "p4fabric: scenario %s, seed %d, policy %s\n", sc.Name, o.Seed, spec.Name)

	res, ep, err := runOverP4Runtime(ctx, cfg, sc, o.Seed, spec, o.Verbose, out)
	if err != nil {
		return nil, err
	}
	direct, err := sim.RunEpisode(ctx, sim.EpisodeSpec{Scenario: sc, Seed: o.Seed, Config: cfg, Policy: spec.Name, NewPolicy: spec.New})
	if err != nil {
		return nil, err
	}
	if res.GRPC, res.GRPCCell, err = evaluate(ep); err != nil {
		return nil, fmt.Errorf("evaluate the P4Runtime run: %w", err)
	}
	if res.Direct, res.DirectCell, err = evaluate(direct); err != nil {
		return nil, fmt.Errorf("evaluate the direct run: %w", err)
	}
	printSummary(out, res)
	return res, nil
}

// policySpec builds the named policy: a reference policy behind the
// immediate gate, or the learned agent behind the stability gate its model
// was evaluated behind (policy.LoadModel).
func policySpec(name, model string, topo proflow.Topology) (eval.PolicySpec, error) {
	if name != "agent" {
		spec, err := eval.ReferencePolicy(name)
		if err != nil {
			return spec, fmt.Errorf("unknown policy %q, want crowd, reactive, static or agent", name)
		}
		return spec, nil
	}
	if _, err := os.Stat(model); err != nil {
		return eval.PolicySpec{}, fmt.Errorf("policy agent needs a model: %w (train one, e.g. make model, or pass -model)", err)
	}
	return eval.AgentPolicy("agent", model, policy.GateConfig{}, topo) // the gate the model records
}

// runOverP4Runtime runs one episode with the controller talking P4Runtime
// over gRPC to a target whose data plane is the simulated fabric, and
// records it as a trace like sim.RunEpisode's.
func runOverP4Runtime(ctx context.Context, cfg sim.Config, sc *sim.Scenario, seed uint64, spec eval.PolicySpec, verbose bool, out io.Writer) (*result, *trace.Episode, error) {
	fab, err := sim.New(cfg, sc, seed)
	if err != nil {
		return nil, nil, err
	}
	topo := fab.Topology()

	// The leaves: P4Runtime devices on one loopback server, fronting the
	// simulator.
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	addr := lis.Addr().String()
	leaves := simdp.Leaves(cfg, addr)
	dp, err := simdp.New(fab, leaves)
	if err != nil {
		lis.Close()
		return nil, nil, err
	}
	srv, err := target.New(dp, dp.Devices(), nil)
	if err != nil {
		lis.Close()
		return nil, nil, err
	}
	gs := grpc.NewServer()
	srv.Register(gs)
	served := make(chan struct{})
	go func() { defer close(served); _ = gs.Serve(lis) }()
	defer func() { gs.Stop(); <-served }()
	fmt.Fprintf(out, "  target: P4Runtime server on %s, %d leaf devices, data plane: the simulated fabric\n", addr, len(leaves))

	// The controller's southbound: the p4runtime client, on virtual time.
	pc := p4runtime.DefaultConfig()
	pc.Topology, pc.Leaves, pc.Flow = topo, leaves, fab.Flow()
	pc.ElectionID = electionID
	pc.Clock = fab.Clock()
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	client, err := p4runtime.Dial(dctx, pc)
	cancel()
	if err != nil {
		return nil, nil, err
	}
	defer client.Close()
	if !client.Primary() {
		return nil, nil, fmt.Errorf("client with election ID %v is not primary: %+v", electionID, client.Status())
	}
	fmt.Fprintf(out, "  client: election ID %v, primary on %d devices, pipeline leaf.p4\n", electionID, len(leaves))

	// Telemetry: the simulator for what a leaf cannot see (overflow, flow
	// counts, elephants), the P4Runtime counters overlaid for the rest.
	merged, err := telemetry.Merge(fab, client)
	if err != nil {
		return nil, nil, err
	}
	rec := &recorder{tel: merged}

	enc, pol, gate, err := spec.New(topo)
	if err != nil {
		return nil, nil, err
	}
	cc := proflow.DefaultConfig()
	cc.Topology, cc.Flow, cc.InitialSwitch = topo, fab.Flow(), fab.InitialSwitch()
	cc.PlaceInitial = true
	cc.Clock, cc.Interval = fab.Clock(), cfg.Interval
	// Virtual time runs far faster than the wall clock; StepTimeout bounds
	// the RPCs of one step in wall time.
	cc.StepTimeout = 5 * time.Second
	if verbose {
		cc.Logger = slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{
			Level: slog.LevelDebug,
			// The decision's "at" is the virtual time; drop the wall time.
			ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
				if a.Key == slog.TimeKey {
					return slog.Attr{}
				}
				return a
			},
		}))
	}
	congestion := fab.CongestionStart()
	cc.Observer = func(d proflow.Decision) {
		if !d.Rerouted {
			return
		}
		s := rec.obs.Switches[d.Current]
		fmt.Fprintf(out, "  %+7.1f s  reroute %s → %s over P4Runtime (on %s: %.0f flows, overflow %.0f/s)\n",
			d.Time.Sub(congestion).Seconds(), topo.Switches[d.Current], topo.Switches[d.Target], topo.Switches[d.Current], s.FlowCount, s.OverflowRate)
	}
	ctrl, err := proflow.NewController(cc, rec, enc, pol, gate, client)
	if err != nil {
		return nil, nil, err
	}
	if err := ctrl.Reconcile(ctx); err != nil {
		return nil, nil, err
	}
	// The client's first reading only primes its counters.
	var prime proflow.Observation
	if err := client.Collect(ctx, &prime); !errors.Is(err, proflow.ErrStale) {
		return nil, nil, fmt.Errorf("prime the P4Runtime counters: %v, want a stale first sample", err)
	}
	fmt.Fprintf(out, "  flow %v placed on %s; %v of virtual time, congestion from %v (times below are from then)\n",
		fab.Flow(), topo.Switches[ctrl.Current()], sc.Length(), sc.Start())

	ep := &trace.Episode{Meta: trace.Meta{
		Format: trace.Format, Source: "p4runtime", Scenario: sc.Name, Policy: spec.Name, Seed: seed,
		Topology: topo, Flow: fab.Flow(), InitialSwitch: fab.InitialSwitch(), Interval: trace.Duration(cfg.Interval),
		Start: fab.Start(), CongestionStart: congestion, End: fab.End(),
	}}
	res := &result{Topology: topo, Flow: fab.Flow(), Leaves: leaves}
	var truth proflow.Observation
	for range int(sc.Length() / cfg.Interval) {
		if err := fab.Advance(cfg.Interval); err != nil {
			return nil, nil, err
		}
		d := ctrl.Step(ctx)
		st := trace.Step{Seq: d.Seq, Time: d.Time, Switch: d.Current, Decision: trace.FromDecision(d)}
		switch {
		case d.Reason.Held():
			res.Held++
			fmt.Fprintf(out, "  %+7.1f s  held: %v\n", d.Time.Sub(congestion).Seconds(), d.Err)
		default:
			st.Obs = rec.obs.Clone()
		}
		if fab.Truth(&truth) {
			st.Throughput = truth.Flow.Throughput
		}
		ep.Steps = append(ep.Steps, st)
	}

	if b, ok := ctrl.Baseline(); ok {
		fmt.Fprintf(out, "  controller's baseline: φ0 %.1f Mbit/s (P4Runtime path counter: frames into %s), ξ %.0f/s and %.0f flows (simulator)\n",
			b.Throughput*8/1e6, leafOf(leaves, fab.Flow().Src), b.Overflow, b.FlowCount)
	}
	if res.Entries, err = readPathEntries(ctx, addr, leaves, topo); err != nil {
		return nil, nil, err
	}
	fmt.Fprintln(out, "  path_select entries on the leaves, read back over P4Runtime:")
	for _, e := range res.Entries {
		fmt.Fprintf(out, "    %s  %v  → port %d (%s)  metadata %q  %d bytes\n", e.Leaf, e.Flow, e.Port, e.Switch, e.Metadata, e.Bytes)
	}
	res.Forward, res.Reverse = dp.Placement()
	res.Final = fab.Current()
	return res, ep, nil
}

// leafOf names the leaf hosting addr.
func leafOf(leaves []p4runtime.Leaf, addr netip.Addr) string {
	for _, l := range leaves {
		for _, p := range l.Hosts {
			if p.Contains(addr) {
				return l.Name
			}
		}
	}
	return "?"
}

// recorder keeps the last observation the controller acted on, for the
// trace and the reroute messages.
type recorder struct {
	tel proflow.Telemetry
	obs proflow.Observation
}

func (r *recorder) Collect(ctx context.Context, obs *proflow.Observation) error {
	err := r.tel.Collect(ctx, obs)
	if err == nil {
		r.obs.CopyFrom(obs)
	}
	return err
}

// pathEntry is a path_select entry as a P4Runtime Read returns it.
type pathEntry struct {
	Leaf     string
	Flow     proflow.FlowID
	Port     uint32
	Switch   string // the aggregation switch behind Port
	Metadata string
	Bytes    int64 // the entry's direct counter
}

// readPathEntries reads every leaf's path_select entries with their direct
// counters, as any P4Runtime client would (a second connection, no
// arbitration needed to read).
func readPathEntries(ctx context.Context, addr string, leaves []p4runtime.Leaf, topo proflow.Topology) ([]pathEntry, error) {
	info, err := p4.LeafP4Info()
	if err != nil {
		return nil, err
	}
	var table, action uint32
	fields := map[uint32]string{}
	for _, t := range info.GetTables() {
		if t.GetPreamble().GetName() == p4.PathTable {
			table = t.GetPreamble().GetId()
			for _, mf := range t.GetMatchFields() {
				fields[mf.GetId()] = mf.GetName()
			}
		}
	}
	for _, a := range info.GetActions() {
		if a.GetPreamble().GetName() == p4.SetUplinkAction {
			action = a.GetPreamble().GetId()
		}
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	rpc := p4v1.NewP4RuntimeClient(conn)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var out []pathEntry
	for _, l := range leaves {
		stream, err := rpc.Read(ctx, &p4v1.ReadRequest{DeviceId: l.DeviceID, Entities: []*p4v1.Entity{{Entity: &p4v1.Entity_TableEntry{
			TableEntry: &p4v1.TableEntry{TableId: table, CounterData: &p4v1.CounterData{}}}}}})
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", l.Name, err)
		}
		for {
			resp, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", l.Name, err)
			}
			for _, ent := range resp.GetEntities() {
				te := ent.GetTableEntry()
				e := pathEntry{Leaf: l.Name, Metadata: string(te.GetMetadata()), Bytes: te.GetCounterData().GetByteCount(), Switch: "?"}
				for _, fm := range te.GetMatch() {
					v := fm.GetExact().GetValue()
					if v == nil {
						v = fm.GetTernary().GetValue()
					}
					n := bigEndian(v)
					switch fields[fm.GetFieldId()] {
					case p4.FieldIPv4Src:
						e.Flow.Src = addr4(n)
					case p4.FieldIPv4Dst:
						e.Flow.Dst = addr4(n)
					case p4.FieldIPProto:
						e.Flow.Proto = uint8(n)
					case p4.FieldL4SrcPort:
						e.Flow.SrcPort = uint16(n)
					case p4.FieldL4DstPort:
						e.Flow.DstPort = uint16(n)
					}
				}
				if a := te.GetAction().GetAction(); a.GetActionId() == action && len(a.GetParams()) == 1 {
					e.Port = uint32(bigEndian(a.GetParams()[0].GetValue()))
					for k, p := range l.Uplinks {
						if p == e.Port {
							e.Switch = topo.Switches[k]
						}
					}
				}
				out = append(out, e)
			}
		}
	}
	return out, nil
}

func bigEndian(b []byte) uint64 {
	var v uint64
	for _, x := range b {
		v = v<<8 | uint64(x)
	}
	return v
}

func addr4(v uint64) netip.Addr {
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// evaluate turns a trace into the evaluation's episode and its summary.
func evaluate(ep *trace.Episode) (*eval.Episode, eval.Cell, error) {
	e, err := eval.FromTrace(ep, 0)
	if err != nil {
		return nil, eval.Cell{}, err
	}
	opt := eval.DefaultOptions()
	opt.Resamples = 1 // one episode: nothing to bootstrap
	sum, err := eval.Summarize([]*eval.Episode{e}, opt)
	if err != nil {
		return nil, eval.Cell{}, err
	}
	c, _ := sum.Cell(e.Scenario, e.Policy)
	return e, c, nil
}

// recovered returns the first time after the first reroute in the window
// at which the flow is back above frac of its baseline; NaN if never or
// without a reroute.
func recovered(e *eval.Episode, first, frac float64) float64 {
	if math.IsNaN(first) {
		return math.NaN()
	}
	for i, t := range e.T {
		if t > first && e.Throughput[i] >= frac*e.Baseline {
			return t
		}
	}
	return math.NaN()
}

func printSummary(out io.Writer, r *result) {
	fmt.Fprintf(out, "\n%s, seed %d, policy %s: baseline φ0 %.1f Mbit/s\n", r.GRPC.Scenario, r.GRPC.Seed, r.GRPC.Policy, r.GRPC.Baseline*8/1e6)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\tmean φ over 120 s\tfirst reroute\treroutes\tback to 90% φ0")
	for _, row := range []struct {
		name string
		e    *eval.Episode
		c    eval.Cell
	}{{"p4runtime over gRPC", r.GRPC, r.GRPCCell}, {"direct (sim.RunEpisode)", r.Direct, r.DirectCell}} {
		fmt.Fprintf(tw, "%s\t%.1f Mbit/s (%.0f%% φ0)\t%s\t%d\t%s\n", row.name, row.c.MeanThroughput*8/1e6, 100*row.c.MeanThroughput/row.e.Baseline,
			seconds(row.c.FirstReroute), len(row.e.Reroutes), seconds(recovered(row.e, row.c.FirstReroute, 0.9)))
	}
	tw.Flush()
	diff := 100 * (r.GRPCCell.MeanThroughput - r.DirectCell.MeanThroughput) / r.DirectCell.MeanThroughput
	fmt.Fprintf(out, "p4runtime over gRPC vs direct: mean φ %+.2f%%, first reroute %s vs %s\n", diff,
		seconds(r.GRPCCell.FirstReroute), seconds(r.DirectCell.FirstReroute))
}

func seconds(s float64) string {
	if math.IsNaN(s) {
		return "none"
	}
	return fmt.Sprintf("%+.1f s", s)
}
