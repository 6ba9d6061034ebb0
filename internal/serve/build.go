package serve

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/internal/fileutil"
	"github.com/proflow-sdn/proflow/models"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/southbound/openflow"
	"github.com/proflow-sdn/proflow/southbound/p4runtime"
	"github.com/proflow-sdn/proflow/southbound/p4runtime/simdp"
	"github.com/proflow-sdn/proflow/southbound/p4runtime/target"
	"github.com/proflow-sdn/proflow/southbound/sim"
	"github.com/proflow-sdn/proflow/telemetry"
	"github.com/proflow-sdn/proflow/telemetry/tcstat"
)

// southbound is what the service drives: telemetry and an enforcer, the
// clock they run on, and what must run and be closed beside the loop.
type southbound struct {
	kind  string
	topo  proflow.Topology
	tel   proflow.Telemetry
	enf   proflow.Enforcer
	clock proflow.Clock
	// run, when set, runs until ctx ends (the OpenFlow listener, the
	// simulator's clock).
	run func(ctx context.Context) error
	// close releases connections after run has returned.
	close func() error
	// fab is the simulated fabric (sim southbound only).
	fab *sim.Fabric
	// adopt, when set, takes over a flow this replica resumes at its
	// stored placement sw (cluster mode): it moves the flow there in this
	// replica's own copy of a simulated fabric, or adopts the previous
	// owner's rules on the switches (OpenFlow, by Locate). It returns the
	// switch that carries the flow now: where the switches place it when
	// they say, else sw.
	adopt func(ctx context.Context, flow proflow.FlowID, sw int) (int, error)
	// install, when set, installs a flow's rules at the switch that
	// carries it when the flow is added (the simulator behind P4Runtime:
	// the client counts a flow by its own entry).
	install func(ctx context.Context, flow proflow.FlowID, sw int) error
	// via is "p4runtime" when the sim is driven through a local P4Runtime
	// target, else "".
	via string
	// measured is the flow whose throughput a real southbound reports.
	measured proflow.FlowID
}

// buildSouthbound builds c's southbound; flows are the configured flows at
// start (a real southbound measures the first one's throughput).
// owner, when set, fences an OpenFlow southbound's override writes (cluster
// mode). With check (proflow serve -check) it builds everything but binds
// no port and dials nothing: the OpenFlow southbound has no run, the
// P4Runtime one no telemetry nor enforcer, the sim one stays in-process.
func buildSouthbound(ctx context.Context, c *Config, flows []FlowConfig, owner openflow.Owner, reg prometheus.Registerer, log *slog.Logger, check bool) (*southbound, error) {
	switch {
	case c.Southbound.Sim != nil:
		return buildSim(ctx, c, reg, log, check)
	case c.Southbound.OpenFlow != nil:
		return buildOpenFlow(c, flows, owner, reg, log, check)
	case c.Southbound.P4Runtime != nil:
		return buildP4Runtime(ctx, c, flows, reg, log, check)
	}
	return nil, errors.New("southbound: none configured")
}

func buildSim(ctx context.Context, c *Config, reg prometheus.Registerer, log *slog.Logger, check bool) (*southbound, error) {
	sc := c.Southbound.Sim
	profile := sc.Profile
	if looksLikeFile(profile) {
		profile = c.Path(profile)
	}
	cfg, err := sim.LoadProfile(profile)
	if err != nil {
		return nil, &FieldError{Path: "southbound.sim.profile", Problem: err.Error()}
	}
	var scen *sim.Scenario
	if looksLikeFile(sc.Scenario) {
		lim := sim.DefaultLimits()
		if sc.MaxProtected > 0 {
			lim.MaxProtected = sc.MaxProtected
		}
		scen, err = sim.LoadScenarioWithLimits(c.Path(sc.Scenario), cfg, lim)
	} else {
		scen, err = sim.BuiltinScenario(sc.Scenario)
	}
	if err != nil {
		return nil, &FieldError{Path: "southbound.sim.scenario", Problem: err.Error()}
	}
	fab, err := sim.New(cfg, scen, sc.Seed)
	if err != nil {
		return nil, &FieldError{Path: "southbound.sim", Problem: err.Error()}
	}
	topo := fab.Topology()
	if c.Topology != nil {
		if err := sameTopology(c.Topology.Topology(), topo); err != nil {
			return nil, &FieldError{Path: "topology", Problem: err.Error() + " (the sim profile's; leave topology out to use it)"}
		}
	}
	// The simulator runs on virtual time: advance it by one interval every
	// interval/speed of wall time. The controller's ticker, on the same
	// clock, fires as it advances.
	step := cfg.Interval
	wall := time.Duration(float64(step) / sc.Speed)
	sb := &southbound{kind: "sim", topo: topo, tel: fab, enf: fab, clock: fab.Clock(), fab: fab,
		run: func(ctx context.Context) error {
			t := time.NewTicker(wall)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return nil
				case <-t.C:
					if err := fab.Advance(step); err != nil {
						return err
					}
				}
			}
		}}
	if sc.Via == "p4runtime" && !check {
		if err := simViaP4Runtime(ctx, sb, reg, log); err != nil {
			return nil, err
		}
	}
	return sb, nil
}

// simViaP4Runtime puts sb's simulated fabric behind a P4Runtime target on
// a loopback port (package simdp) and makes the p4runtime client, dialled
// to it over gRPC, sb's telemetry and enforcer.
func simViaP4Runtime(ctx context.Context, sb *southbound, reg prometheus.Registerer, log *slog.Logger) error {
	fab := sb.fab
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return &FieldError{Path: "southbound.sim.via", Problem: fmt.Sprintf("listen for the local P4Runtime target: %v", err)}
	}
	leaves := simdp.Leaves(fab.Config(), lis.Addr().String())
	dp, err := simdp.New(fab, leaves)
	if err == nil {
		var srv *target.Server
		if srv, err = target.New(dp, dp.Devices(), nil); err == nil {
			gs := grpc.NewServer()
			srv.Register(gs)
			go gs.Serve(lis)
			cfg := p4runtime.DefaultConfig()
			cfg.Topology, cfg.Leaves, cfg.Flow, cfg.Clock = fab.Topology(), leaves, fab.Flow(), fab.Clock()
			cfg.ElectionID = p4runtime.ElectionID{Low: 1}
			cfg.Registerer, cfg.Logger = reg, log.With("component", "p4runtime")
			dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			client, derr := p4runtime.Dial(dctx, cfg)
			cancel()
			if derr != nil {
				gs.Stop()
				return fmt.Errorf("southbound.sim.via: dial the local P4Runtime target: %w", derr)
			}
			sb.tel, sb.enf, sb.via, sb.install = client, client, "p4runtime", client.Place
			sb.close = func() error {
				err := client.Close()
				gs.Stop()
				return err
			}
			return nil
		}
	}
	lis.Close()
	return &FieldError{Path: "southbound.sim.via", Problem: err.Error()}
}

func sameTopology(a, b proflow.Topology) error {
	if strings.Join(a.Switches, ",") != strings.Join(b.Switches, ",") || strings.Join(a.Leaves, ",") != strings.Join(b.Leaves, ",") || a.BucketRate != b.BucketRate {
		return fmt.Errorf("switches %v, leaves %v, bucket %v B/s, want switches %v, leaves %v, bucket %v B/s",
			a.Switches, a.Leaves, a.BucketRate, b.Switches, b.Leaves, b.BucketRate)
	}
	return nil
}

func buildOpenFlow(c *Config, flows []FlowConfig, owner openflow.Owner, reg prometheus.Registerer, log *slog.Logger, check bool) (*southbound, error) {
	oc := c.Southbound.OpenFlow
	cfg := openflow.DefaultConfig()
	cfg.Fabric = openflow.PaperFabric()
	if oc.Fabric != "paper" {
		data, err := fileutil.ReadFile(c.Path(oc.Fabric), maxSmallFileBytes)
		if err != nil {
			return nil, &FieldError{Path: "southbound.openflow.fabric", Problem: err.Error()}
		}
		cfg.Fabric = openflow.Fabric{}
		dec := json.NewDecoder(strings.NewReader(string(data)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&cfg.Fabric); err != nil {
			return nil, &FieldError{Path: "southbound.openflow.fabric", Problem: fmt.Sprintf("%s: %v, want an openflow.Fabric in JSON", oc.Fabric, err)}
		}
	}
	cfg.Topology = c.Topology.Topology()
	cfg.ListenAddr = oc.Listen
	cfg.CookiePrefix = oc.CookiePrefix
	cfg.Owner = owner
	if oc.LeaseTimeout != 0 {
		cfg.LeaseTimeout = oc.LeaseTimeout
	}
	cfg.Registerer, cfg.Logger = reg, log.With("component", "openflow")
	var measured proflow.FlowID
	if len(flows) > 0 {
		measured, _ = proflow.ParseFlowID(flows[0].ID)
		cfg.Flow = measured
	}
	if oc.TLS != nil {
		t, err := serverTLS(c, oc.TLS)
		if err != nil {
			return nil, err
		}
		cfg.TLS = t
	}
	srv, err := openflow.NewServer(cfg)
	if err != nil {
		return nil, &FieldError{Path: "southbound.openflow", Problem: err.Error()}
	}
	if check {
		tel, err := withTCStat(c, srv)
		return &southbound{kind: "openflow", topo: cfg.Topology, tel: tel, enf: srv, clock: proflow.SystemClock{}, measured: measured}, err
	}
	// Listen now, so that a taken port fails the start.
	ln, err := net.Listen("tcp", oc.Listen)
	if err != nil {
		return nil, &FieldError{Path: "southbound.openflow.listen", Problem: err.Error()}
	}
	tel, err := withTCStat(c, srv)
	if err != nil {
		ln.Close()
		return nil, err
	}
	return &southbound{kind: "openflow", topo: cfg.Topology, tel: tel, enf: srv, clock: proflow.SystemClock{}, measured: measured,
		run: func(ctx context.Context) error {
			err := srv.Serve(ctx, ln)
			if ctx.Err() != nil {
				return nil
			}
			return err
		},
		// Serve closes ln; this closes it when New fails before Run.
		close: func() error { _ = ln.Close(); return nil }}, nil
}

func buildP4Runtime(ctx context.Context, c *Config, flows []FlowConfig, reg prometheus.Registerer, log *slog.Logger, check bool) (*southbound, error) {
	pc := c.Southbound.P4Runtime
	cfg := p4runtime.DefaultConfig()
	cfg.Topology = c.Topology.Topology()
	for _, t := range pc.Targets {
		l := p4runtime.Leaf{Name: t.Name, DeviceID: t.DeviceID, Addr: t.Address, HostPorts: t.HostPorts, Uplinks: t.Uplinks}
		for _, h := range t.Hosts {
			pf, _ := netip.ParsePrefix(h) // checked by Validate
			l.Hosts = append(l.Hosts, pf)
		}
		cfg.Leaves = append(cfg.Leaves, l)
	}
	cfg.ElectionID = p4runtime.ElectionID{High: pc.ElectionID.High, Low: pc.ElectionID.Low}
	cfg.Role, cfg.TakeOver = pc.Role, pc.TakeOver
	cfg.Registerer, cfg.Logger = reg, log.With("component", "p4runtime")
	var measured proflow.FlowID
	if len(flows) > 0 {
		measured, _ = proflow.ParseFlowID(flows[0].ID)
		cfg.Flow = measured
	}
	if pc.TLS != nil {
		t, err := clientTLS(c, pc.TLS)
		if err != nil {
			return nil, err
		}
		cfg.TLS = t
	}
	if err := cfg.Validate(); err != nil {
		return nil, &FieldError{Path: "southbound.p4runtime", Problem: err.Error()}
	}
	if check {
		// Not dialled: check every configured flow against the targets
		// as the client will (the first one above, as the measured flow).
		var errs []error
		for i, f := range flows[min(1, len(flows)):] {
			id, err := proflow.ParseFlowID(f.ID)
			if err == nil {
				fc := cfg
				fc.Flow = id
				err = fc.Validate()
			}
			if err != nil {
				errs = append(errs, &FieldError{Path: fmt.Sprintf("flows[%d]", i+1), Problem: f.ID + ": " + err.Error()})
			}
		}
		if err := errors.Join(errs...); err != nil {
			return nil, err
		}
		_, err := withTCStat(c, undialled{})
		return &southbound{kind: "p4runtime", topo: cfg.Topology, clock: proflow.SystemClock{}, measured: measured}, err
	}
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	client, err := p4runtime.Dial(dctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("southbound.p4runtime: %w", err)
	}
	tel, err := withTCStat(c, client)
	if err != nil {
		client.Close()
		return nil, err
	}
	return &southbound{kind: "p4runtime", topo: cfg.Topology, tel: tel, enf: client, clock: proflow.SystemClock{}, measured: measured,
		close: client.Close}, nil
}

// withTCStat overlays the tcstat agents' overflow rates on tel, if
// configured.
func withTCStat(c *Config, tel proflow.Telemetry) (proflow.Telemetry, error) {
	tc := c.Telemetry.TCStat
	if tc == nil {
		return tel, nil
	}
	cc := tcstat.ClientConfig{Topology: c.Topology.Topology(), Timeout: tc.Timeout, MaxAge: tc.MaxAge}
	if tc.Format == "prometheus" {
		cc.Format = tcstat.FormatPrometheus
	}
	for _, s := range tc.Switches {
		cc.Switches = append(cc.Switches, tcstat.Source{Agent: s.Agent, Interfaces: s.Interfaces})
	}
	if tc.TokenFile != "" {
		b, err := fileutil.ReadFile(c.Path(tc.TokenFile), maxSmallFileBytes)
		if err != nil {
			return nil, &FieldError{Path: "telemetry.tcstat.token_file", Problem: err.Error()}
		}
		cc.Token = strings.TrimSpace(string(b))
	}
	client, err := tcstat.NewClient(cc)
	if err != nil {
		return nil, &FieldError{Path: "telemetry.tcstat", Problem: err.Error()}
	}
	return telemetry.Merge(tel, client)
}

func serverTLS(c *Config, t *TLSConfig) (*tls.Config, error) {
	cert, err := loadKeyPair(c.Path(t.CertFile), c.Path(t.KeyFile))
	if err != nil {
		return nil, &FieldError{Path: "southbound.openflow.tls", Problem: fmt.Sprintf("cert_file/key_file: %v", err)}
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if t.CAFile != "" {
		pool, err := loadPool(c.Path(t.CAFile))
		if err != nil {
			return nil, &FieldError{Path: "southbound.openflow.tls.ca_file", Problem: err.Error()}
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

func clientTLS(c *Config, t *TLSConfig) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if t.CertFile != "" {
		cert, err := loadKeyPair(c.Path(t.CertFile), c.Path(t.KeyFile))
		if err != nil {
			return nil, &FieldError{Path: "southbound.p4runtime.tls", Problem: fmt.Sprintf("cert_file/key_file: %v", err)}
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	if t.CAFile != "" {
		pool, err := loadPool(c.Path(t.CAFile))
		if err != nil {
			return nil, &FieldError{Path: "southbound.p4runtime.tls.ca_file", Problem: err.Error()}
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}

// loadKeyPair reads a PEM certificate and its key, each from a regular
// file of at most maxSmallFileBytes (fileutil.ReadKeyPair): the
// configuration's check already refused others, and a file replaced since
// is refused here too, not read without bound.
func loadKeyPair(certFile, keyFile string) (tls.Certificate, error) {
	return fileutil.ReadKeyPair(certFile, keyFile, maxSmallFileBytes)
}

func loadPool(path string) (*x509.CertPool, error) {
	pem, err := fileutil.ReadFile(path, maxSmallFileBytes)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s holds no PEM certificate, want the CA's certificate", path)
	}
	return pool, nil
}

// flowSamples gives a multi-flow controller one sample per flow from a
// southbound that measures one flow (the OpenFlow server and the P4Runtime
// client report Observation.Flow, the throughput of their Config.Flow, and
// leave Observation.Flows empty). The measured flow gets that sample; every
// other flow gets the fabric's congestion rate and a NaN throughput, so
// the controller holds it (ReasonInvalid) rather than act on a throughput
// nobody measured. A southbound that fills Flows is passed through.
type flowSamples struct {
	tel      proflow.Telemetry
	measured proflow.FlowID
}

func (f flowSamples) Collect(ctx context.Context, obs *proflow.Observation) error {
	obs.Flows = obs.Flows[:0]
	if err := f.tel.Collect(ctx, obs); err != nil {
		return err
	}
	if len(obs.Flows) == len(obs.FlowIDs) {
		return nil
	}
	obs.Flows = obs.Flows[:0]
	for _, id := range obs.FlowIDs {
		s := proflow.FlowSample{Throughput: math.NaN(), CongestionRate: obs.Flow.CongestionRate}
		if id == f.measured {
			s = obs.Flow
		}
		obs.Flows = append(obs.Flows, s)
	}
	return nil
}

// flowParts builds each flow's encoder, policy and gate from the config.
func flowParts(c *Config, topo proflow.Topology) (proflow.FlowParts, error) {
	encCfg := telemetry.DefaultEncoderConfig(topo)
	parts := proflow.FlowParts{
		Encoder: func(proflow.ProtectedFlow) (proflow.StateEncoder, error) { return telemetry.NewEncoder(encCfg) },
		Gate:    func(proflow.ProtectedFlow) (proflow.Gate, error) { return policy.Immediate(), nil },
	}
	pc := c.Policy
	switch pc.Kind {
	case "static":
		parts.Policy = func(proflow.ProtectedFlow) (proflow.Policy, error) { return policy.Static{}, nil }
	case "reactive":
		rc := policy.ReactiveConfigFor(topo.BucketRate) // ξ_th scaled to the fabric's bucket rate
		if r := pc.Reactive; r != nil {
			rc.Threshold = orFloat(r.ThresholdBytesPerSec, rc.Threshold)
			rc.Consecutive = orInt(r.Consecutive, rc.Consecutive)
			rc.Cooldown = orDur(r.Cooldown, rc.Cooldown)
		}
		if err := rc.Validate(); err != nil {
			return parts, &FieldError{Path: "policy.reactive", Problem: err.Error()}
		}
		parts.Policy = func(proflow.ProtectedFlow) (proflow.Policy, error) { return policy.NewReactive(rc) }
	case "crowd":
		cc := policy.DefaultCrowdConfig()
		if r := pc.Crowd; r != nil {
			cc.Threshold = orFloat(r.ThresholdFlows, cc.Threshold)
			cc.Consecutive = orInt(r.Consecutive, cc.Consecutive)
			cc.Cooldown = orDur(r.Cooldown, cc.Cooldown)
		}
		if err := cc.Validate(); err != nil {
			return parts, &FieldError{Path: "policy.crowd", Problem: err.Error()}
		}
		parts.Policy = func(proflow.ProtectedFlow) (proflow.Policy, error) { return policy.NewCrowd(cc) }
	case "throughput-drop":
		tc, err := pc.ThroughputDrop.config()
		if err != nil {
			return parts, &FieldError{Path: "policy.throughput_drop", Problem: err.Error()}
		}
		parts.Policy = func(proflow.ProtectedFlow) (proflow.Policy, error) { return policy.NewThroughputDrop(tc) }
	case "latency-threshold":
		lc, err := pc.LatencyThreshold.config()
		if err != nil {
			return parts, &FieldError{Path: "policy.latency_threshold", Problem: err.Error()}
		}
		parts.Policy = func(proflow.ProtectedFlow) (proflow.Policy, error) { return policy.NewLatencyThreshold(lc) }
	case "agent":
		// The agent and the gate its model was evaluated behind; no model
		// path runs the default model embedded in the binary.
		var (
			agent *policy.Agent
			gc    policy.GateConfig
			err   error
		)
		if pc.Model == "" {
			agent, gc, err = models.LoadDefault(encCfg)
		} else {
			agent, gc, err = policy.LoadModel(c.Path(pc.Model), encCfg)
		}
		if err != nil {
			return parts, &FieldError{Path: "policy.model", Problem: err.Error()}
		}
		// The interval the model was trained at (the controller refuses
		// another; say so here, with the key, for -check too).
		if iv := agent.TrainedInterval(); c.Interval != 0 && iv != c.Interval {
			return parts, &FieldError{Path: "interval", Problem: fmt.Sprintf("%v, but the model was trained at a %v control interval, want %v (or a model trained at %v)", c.Interval, iv, iv, c.Interval)}
		}
		// The states the model was trained on: its layout.
		encCfg = agent.EncoderConfig()
		if g := c.Gate; g != nil { // the config's gate wins over the model's
			gc = g.Policy()
		}
		if err := gc.Validate(); err != nil {
			return parts, &FieldError{Path: "gate", Problem: err.Error()}
		}
		// One clone per flow: clones share the weights, each keeps its
		// own buffers.
		var mu sync.Mutex
		parts.Policy = func(proflow.ProtectedFlow) (proflow.Policy, error) {
			mu.Lock()
			defer mu.Unlock()
			return agent.Clone(), nil
		}
		parts.Gate = func(proflow.ProtectedFlow) (proflow.Gate, error) { return policy.NewGate(gc) }
	default:
		return parts, &FieldError{Path: "policy.kind", Problem: fmt.Sprintf("%q, want one of %s", pc.Kind, strings.Join(policyKinds, ", "))}
	}
	return parts, nil
}

func orFloat(v, d float64) float64 {
	if v == 0 {
		return d
	}
	return v
}

func orInt(v, d int) int {
	if v == 0 {
		return d
	}
	return v
}

func orDur(v, d time.Duration) time.Duration {
	if v == 0 {
		return d
	}
	return v
}

// jointPlacer returns the configured joint placement step.
func jointPlacer(mode string) proflow.JointPlacer {
	if mode == "greedy" {
		return &proflow.Greedy{}
	}
	return proflow.Independent{}
}
