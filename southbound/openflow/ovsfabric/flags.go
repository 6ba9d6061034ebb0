package ovsfabric

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/policy/eval"
	"github.com/proflow-sdn/proflow/southbound/sim"
)

// DefaultModel is the agent's model file that -model names by default,
// relative to the repository root: the agent trained on the simulator's
// ovs profile, the fabric's twin (make model PROFILE=ovs). A model of
// another profile encodes rates against another bucket and is refused.
const DefaultModel = "models/ovs.safetensors"

// CommandFlags are the command-line settings that the ovsfabric example and
// `proflow fabric` share: where the fabric's links and OVS files go, where
// its controller listens, the uplink bucket rate and, for run, the
// experiment.
type CommandFlags struct {
	Prefix, RunDir, Listen, Bucket string
	// Policy is static, reactive, crowd or agent; Model and Gate the
	// agent's model file and, when set, a GateConfig JSON file replacing
	// the gate the model records.
	Policy, Model, Gate string
	// Scenario is a built-in scenario of the simulator or "quiet";
	// ScenarioFile, when set, a scenario file that replaces it.
	Scenario, ScenarioFile string
	// TimeFactor divides the scenario's times (Scale.TimeFactor).
	TimeFactor float64
	// Warmup and Duration, when not zero, replace the scaled congestion
	// start and window.
	Warmup, Duration time.Duration
	// Traces, when set, is the directory that receives the episode's
	// trace, named by TraceName.
	Traces string
	// Seed and Repeat label the episode's trace (Experiment.Seed is
	// eval.EpisodeSeed(Seed, scenario, Repeat), as the simulated evaluation
	// derives it).
	Seed    uint64
	Repeat  int
	Verbose bool
	// The regime (Config): RTT on the links of RTTHosts (comma-separated),
	// the senders' congestion control CC, the protected flow's sink's
	// RcvBuf in bytes and the H-limit as a multiple of the bucket rate;
	// each off when zero or empty.
	RTT      time.Duration
	RTTHosts string
	CC       string
	RcvBuf   int
	HLimit   float64
}

// Register defines on fs the flags of the sub-command sub ("up", "down",
// "run" or "evaluate"), with the defaults of every command, and stores
// their values in f when fs is parsed. down takes -prefix, -rundir and -v;
// up adds -listen, -bucket and the regime (-rtt, -rtt-hosts, -cc, -rcvbuf,
// -hlimit), as does movecost; evaluate adds the scaling (-time-factor,
// -warmup, -duration), the agent's -model and -gate and the -seed that
// labels traces; run adds to those -policy, -scenario, -scenario-file,
// -traces and -repeat. Any other sub gets down's flags. Settings whose flag
// sub does not take keep their defaults.
func (f *CommandFlags) Register(fs *flag.FlagSet, sub string) {
	*f = CommandFlags{Prefix: "pf-", RunDir: "/tmp/proflow-ovs", Listen: "127.0.0.1:6653", Bucket: "10mbit", RTTHosts: "h1",
		Policy: "crowd", Model: DefaultModel, Scenario: "S1", TimeFactor: DefaultTimeFactor, Seed: 1}
	fs.StringVar(&f.Prefix, "prefix", f.Prefix, "prefix of every namespace, link and bridge")
	fs.StringVar(&f.RunDir, "rundir", f.RunDir, "OVS run directory `DIR` (database, sockets, pid files, logs)")
	verbose := "log the commands that build or remove the fabric"
	if sub == "run" || sub == "evaluate" {
		verbose = "log controller decisions and fabric commands"
	}
	fs.BoolVar(&f.Verbose, "v", false, verbose)
	if sub != "up" && sub != "run" && sub != "evaluate" && sub != "movecost" {
		return
	}
	fs.StringVar(&f.Listen, "listen", f.Listen, "OpenFlow controller `ADDRESS`")
	fs.StringVar(&f.Bucket, "bucket", f.Bucket, "tc tbf `RATE` of every aggregation uplink (the paper: 200mbit; scaled down for 2 cores)")
	fs.DurationVar(&f.RTT, "rtt", 0, "round-trip `TIME` a userspace delay line adds to the links of -rtt-hosts (the paper's testbed: 50ms; 0: off, sub-millisecond)")
	fs.StringVar(&f.RTTHosts, "rtt-hosts", "h1", "comma-separated `HOSTS` whose links get -rtt (h1: the protected flow's sender, on every path of the flow)")
	fs.StringVar(&f.CC, "cc", "", "TCP congestion control of every sender: cubic (the paper's regime), bbr or reno (empty: the kernel's default, recorded)")
	fs.IntVar(&f.RcvBuf, "rcvbuf", 0, "SO_RCVBUF `BYTES` of the protected flow's sink: a receive-window-limited flow (0: autotuning)")
	fs.Float64Var(&f.HLimit, "hlimit", 0, "H-limit: a tbf at `F` × -bucket on every leaf port toward an aggregation switch, upstream of the counted bucket and not counted (the testbed profile: 1.05; 0: off)")
	if sub == "up" || sub == "movecost" {
		return
	}
	fs.DurationVar(&f.Warmup, "warmup", 0, "protected flow alone before congestion (0: the scenario's congestion_start ÷ -time-factor)")
	fs.DurationVar(&f.Duration, "duration", 0, "time after congestion starts (0: the scenario's window ÷ -time-factor)")
	fs.Float64Var(&f.TimeFactor, "time-factor", DefaultTimeFactor, "divide every time of the scenario by `F` (1: the simulator's timeline)")
	fs.StringVar(&f.Model, "model", f.Model, "the agent's model `FILE`")
	fs.StringVar(&f.Gate, "gate", "", "GateConfig JSON `FILE` for the agent (default: the gate the model records)")
	fs.Uint64Var(&f.Seed, "seed", f.Seed, "base seed that labels the traces, derived per scenario and repeat as the simulated evaluation derives it (the real traffic depends on it only through an rr flow's Poisson arrivals)")
	if sub != "run" {
		return
	}
	fs.StringVar(&f.Policy, "policy", f.Policy, "static, reactive, crowd or agent")
	fs.StringVar(&f.Scenario, "scenario", f.Scenario, "a built-in scenario of the simulator ("+strings.Join(sim.BuiltinScenarios(), " ")+") or quiet (the protected flow alone on agg1)")
	fs.StringVar(&f.ScenarioFile, "scenario-file", "", "a scenario `FILE.json` in the simulator's schema (replaces -scenario)")
	fs.StringVar(&f.Traces, "traces", "", "write the episode's trace (proflow-trace/1) as SCENARIO-POLICY-rREPEAT.jsonl.gz into `DIR`")
	fs.IntVar(&f.Repeat, "repeat", 0, "repeat number that labels the trace")
}

// Config returns the fabric configuration the flags describe, logging to w:
// warnings, or everything with -v.
func (f *CommandFlags) Config(w io.Writer) Config {
	level := slog.LevelWarn
	if f.Verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
	c := Config{Prefix: f.Prefix, RunDir: f.RunDir, Controller: "tcp:" + f.Listen, BucketRate: f.Bucket, Logger: log,
		RTT: f.RTT, CongestionControl: f.CC, ProtectedRcvBufBytes: f.RcvBuf}
	if f.RTT > 0 && f.RTTHosts != "" {
		c.RTTHosts = strings.Split(f.RTTHosts, ",")
	}
	if f.HLimit > 0 {
		if rate, err := ParseRate(f.Bucket); err == nil {
			c.HLimitRate = fmt.Sprintf("%.0fkbit", f.HLimit*rate*8/1e3)
		} else {
			c.HLimitRate = "invalid -bucket " + f.Bucket // refused by Up
		}
	}
	return c
}

// Scale returns the scaling the flags describe, against the simulator's
// datacenter profile.
func (f *CommandFlags) Scale() (Scale, error) {
	s := DefaultScale()
	rate, err := ParseRate(f.Bucket)
	if err != nil {
		return Scale{}, fmt.Errorf("-bucket: %w", err)
	}
	s.BucketRateBytesPerSec, s.TimeFactor = rate, f.TimeFactor
	if err := s.Validate(); err != nil {
		return Scale{}, err
	}
	return s, nil
}

// Experiment returns the run sub-command's experiment on the fabric cfg
// (from Config), writing its report to out. It reads the scenario and, for
// the agent, the model.
func (f *CommandFlags) Experiment(cfg Config, out io.Writer) (Experiment, error) {
	scale, err := f.Scale()
	if err != nil {
		return Experiment{}, err
	}
	sc, err := LoadScenario(f.Scenario, f.ScenarioFile, scale.Sim)
	if err != nil {
		return Experiment{}, err
	}
	pol, err := PolicyNamed(f.Policy, f.Model, f.Gate, scale.Topology())
	if err != nil {
		return Experiment{}, err
	}
	x := Experiment{Fabric: cfg, Listen: f.Listen, Policy: pol, Scenario: sc, Scale: scale,
		Warmup: f.Warmup, Window: f.Duration, Seed: eval.EpisodeSeed(f.Seed, sc.Name, f.Repeat), Repeat: f.Repeat,
		Out: out, Logger: cfg.Logger}
	if f.Traces != "" {
		if err := os.MkdirAll(f.Traces, 0o755); err != nil {
			return Experiment{}, fmt.Errorf("-traces: %w", err)
		}
		x.TraceFile = filepath.Join(f.Traces, TraceName(sc.Name, pol.Name, f.Repeat))
	}
	return x, nil
}

// Policies are the policies a real episode runs: the reference policies and
// the learned agent (the oracle reads the simulator's scenario, so it has no
// place on a real fabric).
var Policies = []string{"static", "reactive", "crowd", eval.ThroughputDropName, eval.LatencyThresholdName, "agent"}

// PolicyNamed returns the policy name for real episodes: a reference policy
// (eval.ReferencePolicy; throughput-drop and latency-threshold with their
// testbed calibrations, policy.DefaultThroughputDropConfig and
// policy.DefaultLatencyThresholdConfig) or, for "agent", the learned agent of the model
// file behind the gate of gateFile, or the gate the model records when
// gateFile is empty (eval.AgentPolicy).
func PolicyNamed(name, model, gateFile string, topo proflow.Topology) (eval.PolicySpec, error) {
	if !slices.Contains(Policies, name) {
		return eval.PolicySpec{}, fmt.Errorf("policy %q, want one of %s", name, strings.Join(Policies, ", "))
	}
	if name != "agent" {
		return eval.ReferencePolicy(name)
	}
	var gate policy.GateConfig
	if gateFile != "" {
		var err error
		if gate, err = eval.LoadGateConfig(gateFile); err != nil {
			return eval.PolicySpec{}, fmt.Errorf("-gate: %w", err)
		}
	}
	spec, err := eval.AgentPolicy(name, model, gate, topo)
	if err != nil {
		return eval.PolicySpec{}, fmt.Errorf("-model %s: %w", model, err)
	}
	return spec, nil
}

// QuietScenario is the name LoadScenario gives the protected flow alone.
const QuietScenario = "quiet"

// LoadScenario returns the scenario file when file is set, else the
// built-in scenario name (any case), or for "quiet" the protected flow alone
// on agg1 for the default window (a no-congestion episode, as calibration
// reads them).
func LoadScenario(name, file string, cfg sim.Config) (*sim.Scenario, error) {
	if file != "" {
		sc, err := sim.LoadScenarioWithLimits(file, cfg, sim.DefaultLimits())
		if err != nil {
			return nil, fmt.Errorf("-scenario-file: %w", err)
		}
		return sc, nil
	}
	if strings.EqualFold(name, QuietScenario) {
		sw := cfg.Topology().Switches[0]
		return &sim.Scenario{Name: QuietScenario + "-" + sw, ProtectedSwitch: sw}, nil
	}
	for _, b := range sim.BuiltinScenarios() {
		if strings.EqualFold(b, name) {
			return sim.BuiltinScenario(b)
		}
	}
	return nil, fmt.Errorf("-scenario %q, want one of %s or quiet (or a -scenario-file)", name, strings.Join(sim.BuiltinScenarios(), " "))
}
