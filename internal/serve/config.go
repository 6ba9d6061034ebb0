package serve

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/internal/fileutil"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/southbound/openflow"
)

// minLeaseTimeout is the shortest OpenFlow lease the service accepts:
// three times the southbound's request timeout, which bounds one leaf's
// lease refresh, run every third of the lease (openflow.Config).
func minLeaseTimeout() time.Duration { return 3 * openflow.DefaultConfig().RequestTimeout }

// Config is the service's configuration, read from YAML (Load, Parse). Its
// YAML keys are the snake_case names in the field tags; unknown keys are
// refused. Relative file names are resolved against the directory of the
// config file (Config.Dir). Start from a file, then WithDefaults.
type Config struct {
	// LogLevel is debug, info (default), warn or error.
	LogLevel string `yaml:"log_level,omitempty"`
	// LogFormat is text (default: slog's key=value lines) or json (one
	// JSON object a line, slog's JSONHandler, timestamps to the
	// nanosecond). Every decision is one record at debug (a reroute at
	// info, a failure at warn) with the flow; in cluster mode every record
	// carries the replica's name. A change needs a restart.
	LogFormat string `yaml:"log_format,omitempty"`
	// Metrics is where /metrics (Prometheus) and /healthz are served.
	Metrics MetricsConfig `yaml:"metrics,omitempty"`
	// Interval is the control interval, 10ms…1m (default 500ms; with the
	// sim southbound the profile's sampling interval, the only one it
	// accepts).
	Interval time.Duration `yaml:"interval,omitempty"`
	// Topology is the controller's view of the fabric. Required with the
	// openflow and p4runtime southbounds; with sim it defaults to the
	// profile's topology (and, when given, must equal it).
	Topology *TopologyConfig `yaml:"topology,omitempty"`
	// Southbound names exactly one of sim, openflow and p4runtime.
	Southbound SouthboundConfig `yaml:"southbound"`
	// Telemetry adds telemetry sources beyond the southbound's own.
	Telemetry TelemetryConfig `yaml:"telemetry,omitempty"`
	// Flows are the protected flows.
	Flows FlowsConfig `yaml:"flows,omitempty"`
	// Policy is the placement policy of every flow.
	Policy PolicyConfig `yaml:"policy"`
	// Gate is the stability gate of the agent policy; absent, the gate
	// the model records. Only with policy.kind agent (the reference
	// policies debounce by themselves, behind an immediate gate).
	Gate *GateConfig `yaml:"gate,omitempty"`
	// Joint is the joint placement step: independent (default) or greedy.
	Joint string `yaml:"joint,omitempty"`
	// Shadow runs every flow without moving it (proflow.MultiConfig.Shadow):
	// the moves the policy would make are logged at info and counted as
	// reason "shadow", and the southbound is never asked to place a flow
	// after start. A change needs a restart.
	Shadow bool `yaml:"shadow"`
	// Cordon names the aggregation switches no flow is moved to, for
	// instance during their maintenance (proflow.MultiConfig.Cordoned).
	// Flows already on one stay until their policy prefers another. A
	// reload (SIGHUP) applies a change at the next step.
	Cordon []string `yaml:"cordon,omitempty"`
	// Baseline shapes each flow's baseline phase.
	Baseline BaselineConfig `yaml:"baseline,omitempty"`
	// Cluster, when set, makes this process one replica of several sharing
	// the protected flows through etcd.
	Cluster *ClusterConfig `yaml:"cluster,omitempty"`

	// Dir is the directory relative file names are resolved against (the
	// config file's). Not read from YAML.
	Dir string `yaml:"-"`
}

// MetricsConfig is the HTTP endpoint of the service.
type MetricsConfig struct {
	// Listen is the address of /metrics and /healthz, host:port (default
	// 127.0.0.1:9464); "off" serves neither.
	Listen string `yaml:"listen,omitempty"`
}

// TopologyConfig is proflow.Topology in YAML.
type TopologyConfig struct {
	Switches []string `yaml:"switches"`
	Leaves   []string `yaml:"leaves"`
	// BucketRate is C, bytes/s.
	BucketRate float64 `yaml:"bucket_rate_bytes_per_sec"`
}

// SouthboundConfig holds exactly one southbound.
type SouthboundConfig struct {
	Sim       *SimConfig       `yaml:"sim,omitempty"`
	OpenFlow  *OpenFlowConfig  `yaml:"openflow,omitempty"`
	P4Runtime *P4RuntimeConfig `yaml:"p4runtime,omitempty"`
}

// SimConfig is the simulated fabric (package southbound/sim) run in the
// service's process on its own clock: a demonstration and test southbound,
// not a network.
type SimConfig struct {
	// Profile is a built-in profile name or a profile JSON file (default
	// testbed).
	Profile string `yaml:"profile,omitempty"`
	// Scenario is a built-in scenario name (S1…, M1…) or a scenario JSON
	// file.
	Scenario string `yaml:"scenario"`
	// Seed seeds the episode (default 1).
	Seed uint64 `yaml:"seed,omitempty"`
	// Speed is simulated seconds per wall-clock second, MinSimSpeed…
	// MaxSimSpeed (default 1).
	Speed float64 `yaml:"speed,omitempty"`
	// Via is how the service reaches the simulated fabric: "" or
	// "direct" (default) calls it in-process; "p4runtime" puts it behind a
	// local P4Runtime target on a loopback port (package
	// southbound/p4runtime/simdp) and drives it with the p4runtime client
	// over real gRPC, table writes, counter reads and releases included.
	Via string `yaml:"via,omitempty"`
	// MaxProtected raises the simulator's bound on a scenario file's
	// protected flows (sim.Limits.MaxProtected, default 256), up to
	// MaxFlows.
	MaxProtected int `yaml:"max_protected,omitempty"`
}

// OpenFlowConfig is the OpenFlow 1.3 controller the switches connect to.
type OpenFlowConfig struct {
	// Listen is the address the switches connect to (default
	// 127.0.0.1:6653, loopback only; a switch on another machine needs
	// an address it reaches, such as :6653, and then TLS is advised).
	Listen string `yaml:"listen,omitempty"`
	// Fabric is the wiring: "paper" (default, the OVS fabric's) or a JSON
	// file of openflow.Fabric.
	Fabric string `yaml:"fabric,omitempty"`
	// TLS, when set, makes the controller speak OpenFlow over TLS; with
	// ca_file it requires switch certificates signed by that CA.
	TLS *TLSConfig `yaml:"tls,omitempty"`
	// CookiePrefix tags the controller's rules (default 0x50f1, any
	// 16-bit value but 0).
	CookiePrefix uint16 `yaml:"cookie_prefix,omitempty"`
	// LeaseTimeout is the hard timeout of override rules (default 10s;
	// negative: permanent).
	LeaseTimeout time.Duration `yaml:"lease_timeout,omitempty"`
}

// TLSConfig names PEM files.
type TLSConfig struct {
	CertFile string `yaml:"cert_file,omitempty"`
	KeyFile  string `yaml:"key_file,omitempty"`
	CAFile   string `yaml:"ca_file,omitempty"`
}

// P4RuntimeConfig is a P4Runtime client of the leaf switches.
type P4RuntimeConfig struct {
	// ElectionID is the client's election ID; the highest is primary.
	ElectionID ElectionIDConfig `yaml:"election_id"`
	// Role is the P4Runtime role (default: the full-access role).
	Role string `yaml:"role,omitempty"`
	// TakeOver makes a backup take over when no primary is left.
	TakeOver bool `yaml:"take_over,omitempty"`
	// TLS secures the connections: ca_file verifies the targets,
	// cert_file and key_file are the client's certificate.
	TLS *TLSConfig `yaml:"tls,omitempty"`
	// Targets are the leaf switches, every leaf of the fabric.
	Targets []P4TargetConfig `yaml:"targets"`
}

// ElectionIDConfig is a 128-bit election ID.
type ElectionIDConfig struct {
	High uint64 `yaml:"high,omitempty"`
	Low  uint64 `yaml:"low"`
}

// P4TargetConfig is one leaf switch (p4runtime.Leaf).
type P4TargetConfig struct {
	Name     string `yaml:"name"`
	Address  string `yaml:"address"`
	DeviceID uint64 `yaml:"device_id"`
	// Hosts are the host prefixes behind the leaf (10.0.0.1/32).
	Hosts []string `yaml:"hosts"`
	// HostPorts face the hosts; Uplinks[k] leads to topology switch k.
	HostPorts []uint32 `yaml:"host_ports"`
	Uplinks   []uint32 `yaml:"uplinks"`
}

// TelemetryConfig adds telemetry sources to the southbound's.
type TelemetryConfig struct {
	// TCStat reads every aggregation switch's overflow rate from tc
	// statistics agents (proflow tcstat), overlaid on the southbound's.
	TCStat *TCStatConfig `yaml:"tcstat,omitempty"`
}

// TCStatConfig is a tcstat client (telemetry/tcstat).
type TCStatConfig struct {
	// Format is json (default, proflow tcstat) or prometheus
	// (node_exporter's qdisc collector).
	Format string `yaml:"format,omitempty"`
	// TokenFile holds the agents' bearer token (never inline).
	TokenFile string `yaml:"token_file,omitempty"`
	// Timeout bounds one request (default 1s); MaxAge is the oldest
	// report accepted (default 5s).
	Timeout time.Duration `yaml:"timeout,omitempty"`
	MaxAge  time.Duration `yaml:"max_age,omitempty"`
	// Switches holds one source per topology switch, in order.
	Switches []TCStatSource `yaml:"switches"`
}

// TCStatSource is one aggregation switch's overflow source.
type TCStatSource struct {
	// Agent is the agent's base URL (http://127.0.0.1:9101).
	Agent string `yaml:"agent"`
	// Interfaces are the switch's rate-limited uplinks on that agent.
	Interfaces []string `yaml:"interfaces"`
}

// FlowsConfig says where the protected flows come from: at most one of
// list, file and etcd_prefix. With none, the sim southbound protects every
// flow of its scenario; the others need one.
type FlowsConfig struct {
	List []FlowConfig `yaml:"list,omitempty"`
	// File is a YAML file holding a list of flows as in list.
	File string `yaml:"file,omitempty"`
	// EtcdPrefix is refused at start: in cluster mode the shared set is
	// under cluster.prefix; leave flows out to take it from etcd.
	EtcdPrefix string `yaml:"etcd_prefix,omitempty"`
}

// FlowConfig is one protected flow.
type FlowConfig struct {
	// ID is the flow's 5-tuple as proflow.ParseFlowID reads it:
	// "tcp 10.0.0.1:5001->10.0.0.8:5201".
	ID string `yaml:"id"`
	// Weight is its priority in joint placement (default 1).
	Weight float64 `yaml:"weight,omitempty"`
	// Switch names the aggregation switch carrying the flow before proflow
	// moves it (its base path). The sim southbound knows it; with the
	// others it is required. A placement found on the switches (Locate)
	// wins over it.
	Switch string `yaml:"switch,omitempty"`
}

// PolicyConfig is the placement policy.
type PolicyConfig struct {
	// Kind is agent, reactive, crowd, throughput-drop, latency-threshold or
	// static.
	Kind string `yaml:"kind"`
	// Model is the agent's model file; absent, the default model embedded
	// in the binary (package models: the testbed profile's
	// models/default.safetensors).
	Model string `yaml:"model,omitempty"`
	// Reactive and Crowd override the reference policies' paper defaults.
	Reactive *ReactiveConfig `yaml:"reactive,omitempty"`
	Crowd    *CrowdConfig    `yaml:"crowd,omitempty"`
	// ThroughputDrop overrides policy.DefaultThroughputDropConfig (the
	// testbed profile's calibration); proflow calibrate prints the settings
	// for a fabric's own congestion-free traffic.
	ThroughputDrop *ThroughputDropConfig `yaml:"throughput_drop,omitempty"`
	// LatencyThreshold overrides policy.DefaultLatencyThresholdConfig (the
	// testbed profile's calibration) likewise.
	LatencyThreshold *LatencyThresholdConfig `yaml:"latency_threshold,omitempty"`
}

// ThroughputDropConfig is policy.ThroughputDropConfig in YAML; zero fields
// keep the defaults.
type ThroughputDropConfig struct {
	Fraction    float64       `yaml:"fraction,omitempty"`
	Consecutive int           `yaml:"consecutive,omitempty"`
	Cooldown    time.Duration `yaml:"cooldown,omitempty"`
	Smoothing   float64       `yaml:"smoothing,omitempty"`
}

// LatencyThresholdConfig is policy.LatencyThresholdConfig in YAML; zero
// fields keep the defaults.
type LatencyThresholdConfig struct {
	Ratio           float64       `yaml:"ratio,omitempty"`
	CompletionRatio float64       `yaml:"completion_ratio,omitempty"`
	Consecutive     int           `yaml:"consecutive,omitempty"`
	Cooldown        time.Duration `yaml:"cooldown,omitempty"`
}

// ReactiveConfig is policy.ReactiveConfig in YAML; zero fields keep the
// defaults, with the threshold scaled to the topology's bucket rate
// (policy.ReactiveConfigFor: 27,000/s at 25 MB/s, 1,350/s at 10 Mbit/s).
type ReactiveConfig struct {
	ThresholdBytesPerSec float64       `yaml:"threshold_bytes_per_sec,omitempty"`
	Consecutive          int           `yaml:"consecutive,omitempty"`
	Cooldown             time.Duration `yaml:"cooldown,omitempty"`
}

// CrowdConfig is policy.CrowdConfig in YAML; zero fields keep the defaults.
type CrowdConfig struct {
	ThresholdFlows float64       `yaml:"threshold_flows,omitempty"`
	Consecutive    int           `yaml:"consecutive,omitempty"`
	Cooldown       time.Duration `yaml:"cooldown,omitempty"`
}

// GateConfig is policy.GateConfig in YAML. A key the YAML leaves out keeps
// the value of the gate that applies without the section, the one the
// model records (as the reference policies' sections keep their defaults);
// the service fills it in at start, and -check prints the result.
type GateConfig struct {
	Margin    float64        `yaml:"margin"`
	Votes     int            `yaml:"votes"`
	Cooldown  time.Duration  `yaml:"cooldown"`
	Tolerance float64        `yaml:"tolerance"`
	Distress  DistressConfig `yaml:"distress"`
	Pareto    bool           `yaml:"pareto"`
	Window    time.Duration  `yaml:"window"`
	Reserve   bool           `yaml:"reserve"`
	Drain     DrainConfig    `yaml:"drain"`
	Gap       bool           `yaml:"gap"`
	Idle      bool           `yaml:"idle"`
	Hold      bool           `yaml:"hold"`

	// omitted records the keys the YAML left out; zero (a gate written
	// in Go, or one completed by over) means every field is given.
	omitted gateKeys
}

// DistressConfig is policy.DistressConfig in YAML: given, it replaces the
// model's as a whole; all zero ({}) turns distress off.
type DistressConfig struct {
	Fraction    float64 `yaml:"fraction"`
	Consecutive int     `yaml:"consecutive"`
	Smoothing   float64 `yaml:"smoothing"`
	Forecast    bool    `yaml:"forecast,omitempty"`
}

// Policy returns the settings as policy.DistressConfig.
func (d DistressConfig) Policy() policy.DistressConfig {
	return policy.DistressConfig(d)
}

// DrainConfig is policy.DrainConfig in YAML: given, it replaces the
// model's as a whole; all zero ({}) turns the hold off.
type DrainConfig struct {
	Depth   float64       `yaml:"depth"`
	Rate    float64       `yaml:"rate,omitempty"`
	Horizon time.Duration `yaml:"horizon"`
	Waive   bool          `yaml:"waive,omitempty"`
	Recheck time.Duration `yaml:"recheck,omitempty"`
}

// Policy returns the settings as policy.DrainConfig.
func (d DrainConfig) Policy() policy.DrainConfig {
	return policy.DrainConfig(d)
}

// Policy returns the gate as policy.GateConfig.
func (g GateConfig) Policy() policy.GateConfig {
	return policy.GateConfig{Margin: g.Margin, Votes: g.Votes, Cooldown: g.Cooldown, Tolerance: g.Tolerance, Distress: g.Distress.Policy(), Pareto: g.Pareto, Window: g.Window, Reserve: g.Reserve, Drain: g.Drain.Policy(), Gap: g.Gap, Idle: g.Idle, Hold: g.Hold}
}

// gateKeys is a set of GateConfig's keys.
type gateKeys uint16

const (
	gateMargin gateKeys = 1 << iota
	gateVotes
	gateCooldown
	gateTolerance
	gateDistress
	gatePareto
	gateWindow
	gateReserve
	gateDrain
	gateGap
	gateIdle
	gateHold

	allGateKeys = gateHold<<1 - 1 // every key: a section left out
)

// gateYAML is GateConfig as YAML sees it: a nil field is a key left out.
type gateYAML struct {
	Margin    *float64        `yaml:"margin,omitempty"`
	Votes     *int            `yaml:"votes,omitempty"`
	Cooldown  *time.Duration  `yaml:"cooldown,omitempty"`
	Tolerance *float64        `yaml:"tolerance,omitempty"`
	Distress  *DistressConfig `yaml:"distress,omitempty"`
	Pareto    *bool           `yaml:"pareto,omitempty"`
	Window    *time.Duration  `yaml:"window,omitempty"`
	Reserve   *bool           `yaml:"reserve,omitempty"`
	Drain     *DrainConfig    `yaml:"drain,omitempty"`
	Gap       *bool           `yaml:"gap,omitempty"`
	Idle      *bool           `yaml:"idle,omitempty"`
	Hold      *bool           `yaml:"hold,omitempty"`
}

// UnmarshalYAML decodes the keys given and records those left out.
func (g *GateConfig) UnmarshalYAML(n *yaml.Node) error {
	var y gateYAML
	if err := n.Decode(&y); err != nil {
		return err
	}
	*g = GateConfig{}
	takeKey(&g.Margin, y.Margin, &g.omitted, gateMargin)
	takeKey(&g.Votes, y.Votes, &g.omitted, gateVotes)
	takeKey(&g.Cooldown, y.Cooldown, &g.omitted, gateCooldown)
	takeKey(&g.Tolerance, y.Tolerance, &g.omitted, gateTolerance)
	takeKey(&g.Distress, y.Distress, &g.omitted, gateDistress)
	takeKey(&g.Pareto, y.Pareto, &g.omitted, gatePareto)
	takeKey(&g.Window, y.Window, &g.omitted, gateWindow)
	takeKey(&g.Reserve, y.Reserve, &g.omitted, gateReserve)
	takeKey(&g.Drain, y.Drain, &g.omitted, gateDrain)
	takeKey(&g.Gap, y.Gap, &g.omitted, gateGap)
	takeKey(&g.Idle, y.Idle, &g.omitted, gateIdle)
	takeKey(&g.Hold, y.Hold, &g.omitted, gateHold)
	return nil
}

// MarshalYAML writes the keys given, so a partial gate reads back as
// partial.
func (g GateConfig) MarshalYAML() (any, error) {
	var y gateYAML
	giveKey(&y.Margin, g.Margin, !g.has(gateMargin))
	giveKey(&y.Votes, g.Votes, !g.has(gateVotes))
	giveKey(&y.Cooldown, g.Cooldown, !g.has(gateCooldown))
	giveKey(&y.Tolerance, g.Tolerance, !g.has(gateTolerance))
	giveKey(&y.Distress, g.Distress, !g.has(gateDistress))
	giveKey(&y.Pareto, g.Pareto, !g.has(gatePareto))
	giveKey(&y.Window, g.Window, !g.has(gateWindow))
	giveKey(&y.Reserve, g.Reserve, !g.has(gateReserve))
	giveKey(&y.Drain, g.Drain, !g.has(gateDrain))
	giveKey(&y.Gap, g.Gap, !g.has(gateGap))
	giveKey(&y.Idle, g.Idle, !g.has(gateIdle))
	giveKey(&y.Hold, g.Hold, !g.has(gateHold))
	return y, nil
}

// has reports whether every key of k was left out.
func (g GateConfig) has(k gateKeys) bool { return g.omitted&k == k }

// Partial reports whether the YAML left a key of the gate out.
func (g GateConfig) Partial() bool { return g.omitted != 0 }

// over returns g with the keys left out taken from base.
func (g GateConfig) over(base policy.GateConfig) GateConfig {
	out := GateConfig{Margin: base.Margin, Votes: base.Votes, Cooldown: base.Cooldown, Tolerance: base.Tolerance,
		Distress: DistressConfig(base.Distress), Pareto: base.Pareto, Window: base.Window, Reserve: base.Reserve,
		Drain: DrainConfig(base.Drain), Gap: base.Gap, Idle: base.Idle, Hold: base.Hold}
	giveOver(&out.Margin, g.Margin, !g.has(gateMargin))
	giveOver(&out.Votes, g.Votes, !g.has(gateVotes))
	giveOver(&out.Cooldown, g.Cooldown, !g.has(gateCooldown))
	giveOver(&out.Tolerance, g.Tolerance, !g.has(gateTolerance))
	giveOver(&out.Distress, g.Distress, !g.has(gateDistress))
	giveOver(&out.Pareto, g.Pareto, !g.has(gatePareto))
	giveOver(&out.Window, g.Window, !g.has(gateWindow))
	giveOver(&out.Reserve, g.Reserve, !g.has(gateReserve))
	giveOver(&out.Drain, g.Drain, !g.has(gateDrain))
	giveOver(&out.Gap, g.Gap, !g.has(gateGap))
	giveOver(&out.Idle, g.Idle, !g.has(gateIdle))
	giveOver(&out.Hold, g.Hold, !g.has(gateHold))
	return out
}

// takeKey sets *dst to *src when the YAML gave the key (src not nil) and
// records key k as left out otherwise (GateConfig.UnmarshalYAML).
func takeKey[T any](dst *T, src *T, omitted *gateKeys, k gateKeys) {
	if src != nil {
		*dst = *src
	} else {
		*omitted |= k
	}
}

// giveKey sets *dst to a pointer to v when the key is given, leaving it
// nil (the key left out) otherwise (GateConfig.MarshalYAML).
func giveKey[T any](dst **T, v T, given bool) {
	if given {
		*dst = &v
	}
}

// giveOver sets *dst to v when the key is given (GateConfig.over).
func giveOver[T any](dst *T, v T, given bool) {
	if given {
		*dst = v
	}
}

// BaselineConfig shapes each flow's baseline phase (defaults 4 and 10
// samples).
type BaselineConfig struct {
	Warmup  int `yaml:"warmup,omitempty"`
	Samples int `yaml:"samples,omitempty"`
}

// ClusterConfig makes the process one replica of several that share the
// protected flows through etcd (package internal/cluster): the shared set
// lives under Prefix; flows.list or flows.file, when given, are added to it;
// the replica protects the flows of the shards it owns.
type ClusterConfig struct {
	Endpoints []string      `yaml:"endpoints"`
	Prefix    string        `yaml:"prefix,omitempty"`
	Replica   string        `yaml:"replica"`
	LeaseTTL  time.Duration `yaml:"lease_ttl,omitempty"`
}

// Defaults of the service.
const (
	DefaultMetricsListen = "127.0.0.1:9464"
	DefaultOpenFlowPort  = "127.0.0.1:6653"
	DefaultCookiePrefix  = 0x50f1
	DefaultClusterPrefix = "/proflow"
	DefaultLeaseTTL      = 10 * time.Second
	// MaxFlows bounds the flows of one config.
	MaxFlows = 100_000
	// MinInterval and MaxInterval bound interval.
	MinInterval = 10 * time.Millisecond
	MaxInterval = time.Minute
	// MinSimSpeed and MaxSimSpeed bound southbound.sim.speed: below the
	// minimum a 500 ms step takes more than a minute of wall time.
	MinSimSpeed = 0.01
	MaxSimSpeed = 1000
)

// Bounds on the files a config names, in bytes: each is read whole, so
// each is refused beyond its bound (and when it is not a regular file).
const (
	// MaxConfigBytes bounds the config file and a flows file: MaxFlows
	// flows of about 70 bytes each, with room to spare.
	MaxConfigBytes = 16 << 20
	// maxSmallFileBytes bounds a fabric JSON file, a TLS certificate, key
	// or CA file and a token file.
	maxSmallFileBytes = 1 << 20
	// maxModelBytes bounds a model file (the reference models are 300 KB).
	maxModelBytes = 1 << 30
)

// Policy kinds and joint modes.
var (
	policyKinds = []string{"agent", "reactive", "crowd", "throughput-drop", "latency-threshold", "static"}
	jointModes  = []string{"independent", "greedy"}
	logLevels   = []string{"debug", "info", "warn", "error"}
	logFormats  = []string{"text", "json"}
)

// Load reads, checks and returns the config file at path, with relative
// file names resolved against its directory. It does not apply defaults.
func Load(path string) (*Config, error) {
	data, err := fileutil.ReadFile(path, MaxConfigBytes)
	if err != nil {
		return nil, fmt.Errorf("serve: config: %w", err)
	}
	c, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("serve: config %s: %w", path, err)
	}
	c.Dir = filepath.Dir(path)
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("serve: config %s: %w", path, err)
	}
	return c, nil
}

// Parse decodes one YAML document into a Config, refusing unknown keys and
// values of the wrong type with their field path. It does not Validate.
func Parse(data []byte) (*Config, error) {
	c := new(Config)
	if err := decodeStrict(data, c); err != nil {
		return nil, err
	}
	return c, nil
}

// FieldError is one bad value of a config: its field path
// ("southbound.sim.speed", "flows.list[2].id") and what is wrong.
type FieldError struct {
	Path    string
	Problem string
}

func (e *FieldError) Error() string { return e.Path + ": " + e.Problem }

// problems collects FieldErrors.
type problems []error

func (p *problems) add(path, format string, args ...any) {
	*p = append(*p, &FieldError{Path: path, Problem: fmt.Sprintf(format, args...)})
}

// WithDefaults returns a copy of c with every default filled in.
func (c Config) WithDefaults() Config {
	if c.LogLevel == "" {
		c.LogLevel = "info"
	}
	if c.LogFormat == "" {
		c.LogFormat = "text"
	}
	if c.Metrics.Listen == "" {
		c.Metrics.Listen = DefaultMetricsListen
	}
	if c.Interval == 0 {
		c.Interval = proflow.DefaultInterval
	}
	if c.Joint == "" {
		c.Joint = "independent"
	}
	if c.Baseline.Warmup == 0 {
		c.Baseline.Warmup = 4
	}
	if c.Baseline.Samples == 0 {
		c.Baseline.Samples = 10
	}
	if s := c.Southbound.Sim; s != nil {
		s2 := *s
		if s2.Profile == "" {
			s2.Profile = "testbed"
		}
		if s2.Seed == 0 {
			s2.Seed = 1
		}
		if s2.Speed == 0 {
			s2.Speed = 1
		}
		c.Southbound.Sim = &s2
	}
	if o := c.Southbound.OpenFlow; o != nil {
		o2 := *o
		if o2.Listen == "" {
			o2.Listen = DefaultOpenFlowPort
		}
		if o2.Fabric == "" {
			o2.Fabric = "paper"
		}
		if o2.CookiePrefix == 0 {
			o2.CookiePrefix = DefaultCookiePrefix
		}
		c.Southbound.OpenFlow = &o2
	}
	if t := c.Telemetry.TCStat; t != nil {
		t2 := *t
		if t2.Format == "" {
			t2.Format = "json"
		}
		c.Telemetry.TCStat = &t2
	}
	if cl := c.Cluster; cl != nil {
		cl2 := *cl
		if cl2.Prefix == "" {
			cl2.Prefix = DefaultClusterPrefix
		}
		if cl2.LeaseTTL == 0 {
			cl2.LeaseTTL = DefaultLeaseTTL
		}
		c.Cluster = &cl2
	}
	return c
}

// Path resolves a file name of the config against Dir.
func (c *Config) Path(name string) string {
	if name == "" || filepath.IsAbs(name) || c.Dir == "" {
		return name
	}
	return filepath.Join(c.Dir, name)
}

// Validate reports every bad value of c at once, each as a *FieldError
// naming its field path and what was expected. It checks what can be
// checked without the network: values, ranges, names, that files named
// exist. Building the service checks the rest (models, scenarios, TLS
// files' contents).
func (c *Config) Validate() error {
	var p problems
	if c.LogLevel != "" && !slices.Contains(logLevels, c.LogLevel) {
		p.add("log_level", "%q, want one of %s", c.LogLevel, strings.Join(logLevels, ", "))
	}
	if c.LogFormat != "" && !slices.Contains(logFormats, c.LogFormat) {
		p.add("log_format", "%q, want one of %s", c.LogFormat, strings.Join(logFormats, ", "))
	}
	if l := c.Metrics.Listen; l != "" && l != "off" {
		checkHostPort(&p, "metrics.listen", l)
	}
	if c.Interval < 0 || (c.Interval > 0 && (c.Interval < MinInterval || c.Interval > MaxInterval)) {
		p.add("interval", "%v, want %v…%v (or absent for 500ms)", c.Interval, MinInterval, MaxInterval)
	}
	sb := c.checkSouthbound(&p)
	c.checkTopology(&p, sb)
	c.checkTelemetry(&p)
	c.checkFlows(&p, sb)
	c.checkPolicy(&p)
	if c.Joint != "" && !slices.Contains(jointModes, c.Joint) {
		p.add("joint", "%q, want one of %s", c.Joint, strings.Join(jointModes, ", "))
	}
	for i, name := range c.Cordon {
		if name == "" {
			p.add(fmt.Sprintf("cordon[%d]", i), "empty, want a switch name of the topology")
		}
	}
	if c.Baseline.Warmup < 0 {
		p.add("baseline.warmup", "%d, want at least 0 samples", c.Baseline.Warmup)
	}
	if c.Baseline.Samples < 0 {
		p.add("baseline.samples", "%d, want at least 1 sample (or absent for 10)", c.Baseline.Samples)
	}
	c.checkCluster(&p)
	return errors.Join(p...)
}

// checkSouthbound checks the southbound and returns its kind ("" if not
// exactly one is set).
func (c *Config) checkSouthbound(p *problems) string {
	var set []string
	s := c.Southbound
	if s.Sim != nil {
		set = append(set, "sim")
	}
	if s.OpenFlow != nil {
		set = append(set, "openflow")
	}
	if s.P4Runtime != nil {
		set = append(set, "p4runtime")
	}
	if len(set) != 1 {
		got := "none"
		if len(set) > 1 {
			got = strings.Join(set, " and ")
		}
		p.add("southbound", "%s set, want exactly one of sim, openflow, p4runtime", got)
		return ""
	}
	switch set[0] {
	case "sim":
		if s.Sim.Scenario == "" {
			p.add("southbound.sim.scenario", "missing, want a built-in scenario name (S1, M2, …) or a scenario JSON file")
		} else if looksLikeFile(s.Sim.Scenario) {
			c.checkFile(p, "southbound.sim.scenario", s.Sim.Scenario, maxSmallFileBytes)
		}
		if s.Sim.Profile != "" && looksLikeFile(s.Sim.Profile) {
			c.checkFile(p, "southbound.sim.profile", s.Sim.Profile, maxSmallFileBytes)
		}
		if v := s.Sim.Speed; v != 0 && !(v >= MinSimSpeed && v <= MaxSimSpeed) {
			p.add("southbound.sim.speed", "%v, want a number in [%v, %v] (simulated seconds per second; absent for 1)", v, MinSimSpeed, MaxSimSpeed)
		}
		if v := s.Sim.Via; v != "" && v != "direct" && v != "p4runtime" {
			p.add("southbound.sim.via", "%q, want direct (in-process, default) or p4runtime (behind a local P4Runtime target)", v)
		}
		if v := s.Sim.MaxProtected; v < 0 || v > MaxFlows {
			p.add("southbound.sim.max_protected", "%d, want 1…%d (absent: the simulator's 256)", v, MaxFlows)
		}
	case "openflow":
		o := s.OpenFlow
		if o.Listen != "" {
			checkHostPort(p, "southbound.openflow.listen", o.Listen)
		}
		if o.Fabric != "" && o.Fabric != "paper" {
			c.checkFile(p, "southbound.openflow.fabric", o.Fabric, maxSmallFileBytes)
		}
		if o.TLS != nil {
			c.checkTLS(p, "southbound.openflow.tls", o.TLS, true)
		}
		if v, least := o.LeaseTimeout, minLeaseTimeout(); v > 0 && (v < least || v > 65535*time.Second) {
			p.add("southbound.openflow.lease_timeout", "%v, want %v…65535s (OpenFlow hard timeouts are whole seconds, refreshed every third of the lease, each leaf within the southbound's %v request timeout), negative for permanent rules, or absent for 10s", v, least, least/3)
		}
	case "p4runtime":
		c.checkP4Runtime(p, s.P4Runtime)
	}
	return set[0]
}

func (c *Config) checkP4Runtime(p *problems, pc *P4RuntimeConfig) {
	if pc.ElectionID.High == 0 && pc.ElectionID.Low == 0 {
		p.add("southbound.p4runtime.election_id", "0, want a non-zero election ID (low, and high for the upper 64 bits)")
	}
	if pc.TLS != nil {
		c.checkTLS(p, "southbound.p4runtime.tls", pc.TLS, false)
	}
	if len(pc.Targets) == 0 {
		p.add("southbound.p4runtime.targets", "empty, want one entry per leaf switch")
	}
	names, ids := map[string]int{}, map[string]int{}
	for i, t := range pc.Targets {
		path := fmt.Sprintf("southbound.p4runtime.targets[%d]", i)
		if t.Name == "" {
			p.add(path+".name", "missing, want the leaf's name")
		} else if j, dup := names[t.Name]; dup {
			p.add(path+".name", "%q also names targets[%d], want a unique name", t.Name, j)
		} else {
			names[t.Name] = i
		}
		checkHostPort(p, path+".address", t.Address)
		key := fmt.Sprintf("%s/%d", t.Address, t.DeviceID)
		if j, dup := ids[key]; dup {
			p.add(path+".device_id", "%d at %s is also targets[%d]'s, want one device per leaf", t.DeviceID, t.Address, j)
		} else {
			ids[key] = i
		}
		if len(t.Hosts) == 0 {
			p.add(path+".hosts", "empty, want the host prefixes behind the leaf (10.0.0.1/32)")
		}
		for j, h := range t.Hosts {
			if _, err := netip.ParsePrefix(h); err != nil {
				p.add(fmt.Sprintf("%s.hosts[%d]", path, j), "%q, want an IP prefix such as 10.0.0.1/32", h)
			}
		}
		if len(t.HostPorts) == 0 {
			p.add(path+".host_ports", "empty, want the ports facing the hosts")
		}
		if n := c.numSwitches(); n > 0 && len(t.Uplinks) != n {
			p.add(path+".uplinks", "%d ports, want one per topology switch (%d)", len(t.Uplinks), n)
		}
	}
}

func (c *Config) numSwitches() int {
	if c.Topology == nil {
		return 0
	}
	return len(c.Topology.Switches)
}

func (c *Config) checkTopology(p *problems, sb string) {
	t := c.Topology
	if t == nil {
		if sb == "openflow" || sb == "p4runtime" {
			p.add("topology", "missing, want switches, leaves and bucket_rate_bytes_per_sec (required with the %s southbound)", sb)
		}
		return
	}
	if err := t.Topology().Validate(); err != nil {
		p.add("topology", "%v", strings.TrimPrefix(err.Error(), "proflow: "))
	}
}

// Topology returns t as a proflow.Topology.
func (t *TopologyConfig) Topology() proflow.Topology {
	return proflow.Topology{Switches: slices.Clone(t.Switches), Leaves: slices.Clone(t.Leaves), BucketRate: t.BucketRate}
}

func (c *Config) checkTelemetry(p *problems) {
	t := c.Telemetry.TCStat
	if t == nil {
		return
	}
	if c.Southbound.Sim != nil {
		p.add("telemetry.tcstat", "set with southbound.sim, want it only with openflow or p4runtime (the simulated fabric counts its own overflow)")
	}
	if t.Format != "" && t.Format != "json" && t.Format != "prometheus" {
		p.add("telemetry.tcstat.format", "%q, want json or prometheus", t.Format)
	}
	if t.TokenFile != "" {
		c.checkFile(p, "telemetry.tcstat.token_file", t.TokenFile, maxSmallFileBytes)
	}
	if t.Timeout < 0 {
		p.add("telemetry.tcstat.timeout", "%v, want a positive duration (or absent for 1s)", t.Timeout)
	}
	if n := c.numSwitches(); n > 0 && len(t.Switches) != n {
		p.add("telemetry.tcstat.switches", "%d sources, want one per topology switch (%d)", len(t.Switches), n)
	} else if len(t.Switches) == 0 {
		p.add("telemetry.tcstat.switches", "empty, want one source per aggregation switch")
	}
	for i, s := range t.Switches {
		path := fmt.Sprintf("telemetry.tcstat.switches[%d]", i)
		if !strings.HasPrefix(s.Agent, "http://") && !strings.HasPrefix(s.Agent, "https://") {
			p.add(path+".agent", "%q, want an http:// or https:// URL of a tcstat agent", s.Agent)
		}
		if len(s.Interfaces) == 0 {
			p.add(path+".interfaces", "empty, want the switch's rate-limited uplinks")
		}
	}
}

func (c *Config) checkFlows(p *problems, sb string) {
	f := c.Flows
	n := 0
	for _, set := range []bool{len(f.List) > 0, f.File != "", f.EtcdPrefix != ""} {
		if set {
			n++
		}
	}
	switch {
	case n > 1:
		p.add("flows", "more than one of list, file and etcd_prefix set, want one")
	case n == 0 && sb != "sim" && sb != "" && c.Cluster == nil:
		p.add("flows", "none, want list, file or etcd_prefix (only the sim southbound defaults to its scenario's flows)")
	}
	if f.File != "" {
		c.checkFile(p, "flows.file", f.File, MaxConfigBytes)
	}
	if f.EtcdPrefix != "" {
		if c.Cluster == nil {
			p.add("flows.etcd_prefix", "set without cluster, want a cluster section (etcd endpoints) or list/file")
		} else if !strings.HasPrefix(f.EtcdPrefix, "/") {
			p.add("flows.etcd_prefix", "%q, want a key prefix starting with /", f.EtcdPrefix)
		}
	}
	checkFlowList(p, "flows.list", f.List, sb != "sim" && sb != "", c.Topology)
}

// checkFlowList checks a list of flows; needSwitch says the southbound
// cannot tell where a flow starts.
func checkFlowList(p *problems, path string, fs []FlowConfig, needSwitch bool, topo *TopologyConfig) {
	if len(fs) > MaxFlows {
		p.add(path, "%d flows, want at most %d", len(fs), MaxFlows)
		return
	}
	seen := make(map[proflow.FlowID]int, len(fs))
	for i, f := range fs {
		fp := fmt.Sprintf("%s[%d]", path, i)
		id, err := proflow.ParseFlowID(f.ID)
		switch {
		case f.ID == "":
			p.add(fp+".id", "missing, want a 5-tuple such as \"tcp 10.0.0.1:5001->10.0.0.8:5201\"")
		case err != nil:
			p.add(fp+".id", "%q: %v", f.ID, strings.TrimPrefix(err.Error(), "proflow: "))
		default:
			if j, dup := seen[id]; dup {
				p.add(fp+".id", "%v is also %s[%d], want every flow once", id, path, j)
			}
			seen[id] = i
		}
		if w := f.Weight; w < 0 || math.IsNaN(w) || math.IsInf(w, 0) {
			p.add(fp+".weight", "%v, want a finite number > 0 (or absent for 1)", w)
		}
		switch {
		case f.Switch == "" && needSwitch:
			p.add(fp+".switch", "missing, want the aggregation switch carrying the flow now (its base path)")
		case f.Switch != "" && topo != nil && !slices.Contains(topo.Switches, f.Switch):
			p.add(fp+".switch", "%q, want one of the topology's switches %s", f.Switch, strings.Join(topo.Switches, ", "))
		}
	}
}

func (c *Config) checkPolicy(p *problems) {
	pc := c.Policy
	if !slices.Contains(policyKinds, pc.Kind) {
		got := fmt.Sprintf("%q", pc.Kind)
		if pc.Kind == "" {
			got = "missing"
		}
		p.add("policy.kind", "%s, want one of %s", got, strings.Join(policyKinds, ", "))
	}
	if pc.Model != "" && pc.Kind != "agent" {
		p.add("policy.model", "set with policy.kind %s, want it only with agent", pc.Kind)
	}
	if pc.Kind == "agent" && pc.Model != "" { // absent: the embedded default model
		c.checkFile(p, "policy.model", pc.Model, maxModelBytes)
	}
	if r := pc.Reactive; r != nil {
		checkReference(p, "reactive", pc.Kind, "threshold_bytes_per_sec", r.ThresholdBytesPerSec, r.Consecutive, r.Cooldown)
	}
	if r := pc.Crowd; r != nil {
		checkReference(p, "crowd", pc.Kind, "threshold_flows", r.ThresholdFlows, r.Consecutive, r.Cooldown)
	}
	if r := pc.ThroughputDrop; r != nil {
		checkSelfSignal(p, "throughput_drop", "throughput-drop", pc.Kind, r.config)
	}
	if r := pc.LatencyThreshold; r != nil {
		checkSelfSignal(p, "latency_threshold", "latency-threshold", pc.Kind, r.config)
	}
	if g := c.Gate; g != nil {
		if pc.Kind != "agent" {
			p.add("gate", "set with policy.kind %s, want it only with agent (the reference policies debounce by themselves)", pc.Kind)
		}
		// Only the keys given: the others come from the model's gate.
		if !g.has(gateMargin) && (g.Margin < 0 || math.IsNaN(g.Margin) || math.IsInf(g.Margin, 0)) {
			p.add("gate.margin", "%v, want a finite number >= 0", g.Margin)
		}
		if !g.has(gateVotes) && g.Votes < 1 {
			p.add("gate.votes", "%d, want at least 1", g.Votes)
		}
		if !g.has(gateCooldown) && g.Cooldown < 0 {
			p.add("gate.cooldown", "%v, want a duration >= 0", g.Cooldown)
		}
		if !g.has(gateTolerance) && (g.Tolerance < 0 || math.IsNaN(g.Tolerance) || math.IsInf(g.Tolerance, 0)) {
			p.add("gate.tolerance", "%v, want a finite number >= 0", g.Tolerance)
		}
		if !g.has(gateWindow) && g.Window < 0 {
			p.add("gate.window", "%v, want a duration >= 0 (0 counts consecutive votes)", g.Window)
		}
		if !g.has(gateDistress) {
			if err := (policy.GateConfig{Votes: 1, Distress: g.Distress.Policy()}).Validate(); err != nil {
				p.add("gate.distress", "%v (all zero, {}, turns distress off)", err)
			}
		}
		if !g.has(gateDrain) {
			if err := (policy.GateConfig{Votes: 1, Drain: g.Drain.Policy()}).Validate(); err != nil {
				p.add("gate.drain", "%v (all zero, {}, turns drain off)", err)
			}
		}
		if !g.has(gateReserve) && !g.has(gateWindow) && g.Reserve && g.Window > 0 {
			p.add("gate.reserve", "true with gate.window %v, want one way of remembering votes: window 0 with reserve, or reserve false", g.Window)
		}
	}
}

// checkReference checks the settings of a reference policy (reactive,
// crowd): zero keeps a default, the rest must be in range.
func checkReference(p *problems, name, kind, thresholdKey string, threshold float64, consecutive int, cooldown time.Duration) {
	path := "policy." + name
	if kind != name {
		p.add(path, "set with policy.kind %s, want it only with %s", kind, name)
	}
	if threshold < 0 || math.IsNaN(threshold) || math.IsInf(threshold, 0) {
		p.add(path+"."+thresholdKey, "%v, want a finite number > 0", threshold)
	}
	if consecutive < 0 {
		p.add(path+".consecutive", "%d, want at least 1", consecutive)
	}
	if cooldown < 0 {
		p.add(path+".cooldown", "%v, want a duration >= 0", cooldown)
	}
}

func (c *Config) checkCluster(p *problems) {
	cl := c.Cluster
	if cl == nil {
		return
	}
	if len(cl.Endpoints) == 0 {
		p.add("cluster.endpoints", "empty, want the etcd cluster's client URLs (http://127.0.0.1:2379)")
	}
	for i, e := range cl.Endpoints {
		if !strings.HasPrefix(e, "http://") && !strings.HasPrefix(e, "https://") {
			p.add(fmt.Sprintf("cluster.endpoints[%d]", i), "%q, want an http:// or https:// URL", e)
		}
	}
	if cl.Prefix != "" && !strings.HasPrefix(cl.Prefix, "/") {
		p.add("cluster.prefix", "%q, want a key prefix starting with /", cl.Prefix)
	}
	if cl.Replica == "" {
		p.add("cluster.replica", "missing, want this replica's unique name")
	} else if strings.ContainsAny(cl.Replica, "/ \t\n") {
		p.add("cluster.replica", "%q, want a name without / or spaces", cl.Replica)
	}
	if cl.LeaseTTL < 0 || (cl.LeaseTTL > 0 && cl.LeaseTTL < time.Second) {
		p.add("cluster.lease_ttl", "%v, want at least 1s (etcd leases count whole seconds)", cl.LeaseTTL)
	}
}

func (c *Config) checkTLS(p *problems, path string, t *TLSConfig, server bool) {
	if server && (t.CertFile == "" || t.KeyFile == "") {
		p.add(path, "want cert_file and key_file (the controller's certificate), and ca_file to require switch certificates")
	}
	if (t.CertFile == "") != (t.KeyFile == "") {
		p.add(path, "one of cert_file and key_file set, want both or neither")
	}
	for _, f := range []struct{ name, file string }{{"cert_file", t.CertFile}, {"key_file", t.KeyFile}, {"ca_file", t.CAFile}} {
		if f.file != "" {
			c.checkFile(p, path+"."+f.name, f.file, maxSmallFileBytes)
		}
	}
}

// checkFile reports a file that cannot be read: missing, not a regular
// file (a directory, a device, a FIFO) or larger than maxBytes.
func (c *Config) checkFile(p *problems, path, name string, maxBytes int64) {
	if err := fileutil.CheckRegular(c.Path(name), maxBytes); err != nil {
		p.add(path, "%q: %v, want a readable file", name, unwrapPath(err))
	}
}

func unwrapPath(err error) error {
	if pe, ok := errors.AsType[*os.PathError](err); ok {
		return pe.Err
	}
	return err
}

func checkHostPort(p *problems, path, addr string) {
	_, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		p.add(path, "%q, want host:port (127.0.0.1:9464, :6653)", addr)
		return
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		p.add(path, "%q: port %q, want a number 0…65535", addr, port)
	}
}

// looksLikeFile reports whether a profile or scenario names a file rather
// than a built-in.
func looksLikeFile(s string) bool {
	return strings.ContainsRune(s, os.PathSeparator) || strings.HasSuffix(s, ".json")
}

// Effective returns c with its defaults as YAML: what the service runs.
func (c Config) Effective() ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(c.WithDefaults()); err != nil {
		return nil, fmt.Errorf("serve: encode config: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("serve: encode config: %w", err)
	}
	return b.Bytes(), nil
}

// ReadFlowsFile reads a flows file: a YAML list of flows as in flows.list.
func ReadFlowsFile(path string, needSwitch bool, topo *TopologyConfig) ([]FlowConfig, error) {
	data, err := fileutil.ReadFile(path, MaxConfigBytes)
	if err != nil {
		return nil, fmt.Errorf("serve: flows file: %w", err)
	}
	var fs []FlowConfig
	if err := decodeStrict(data, &fs); err != nil {
		return nil, fmt.Errorf("serve: flows file %s: %w", path, err)
	}
	var p problems
	checkFlowList(&p, "flows", fs, needSwitch, topo)
	if err := errors.Join(p...); err != nil {
		return nil, fmt.Errorf("serve: flows file %s: %w", path, err)
	}
	return fs, nil
}

// checkSelfSignal checks the overrides policy.KEY of the policy kind: set
// only with that policy.kind, and valid (config).
func checkSelfSignal[T any](p *problems, key, kind, got string, config func() (T, error)) {
	if got != kind {
		p.add("policy."+key, "set with policy.kind %s, want it only with %s", got, kind)
	}
	if _, err := config(); err != nil {
		p.add("policy."+key, "%v", err)
	}
}

// config returns the policy's settings: the defaults with the fields set
// here, validated.
func (r *LatencyThresholdConfig) config() (policy.LatencyThresholdConfig, error) {
	c := policy.DefaultLatencyThresholdConfig()
	if r != nil {
		c.Ratio = orFloat(r.Ratio, c.Ratio)
		c.CompletionRatio = orFloat(r.CompletionRatio, c.CompletionRatio)
		c.Consecutive = orInt(r.Consecutive, c.Consecutive)
		c.Cooldown = orDur(r.Cooldown, c.Cooldown)
	}
	if r != nil && (r.Consecutive < 0 || r.Cooldown < 0 || r.Ratio < 0 || r.CompletionRatio < 0) {
		return c, fmt.Errorf("ratio %v, completion_ratio %v, consecutive %d, cooldown %v: want non-negative values (0 keeps a default)", r.Ratio, r.CompletionRatio, r.Consecutive, r.Cooldown)
	}
	return c, c.Validate()
}

// config returns the policy's settings: the defaults with the fields set
// here, validated.
func (r *ThroughputDropConfig) config() (policy.ThroughputDropConfig, error) {
	c := policy.DefaultThroughputDropConfig()
	if r != nil {
		c.Fraction = orFloat(r.Fraction, c.Fraction)
		c.Consecutive = orInt(r.Consecutive, c.Consecutive)
		c.Cooldown = orDur(r.Cooldown, c.Cooldown)
		c.Smoothing = orFloat(r.Smoothing, c.Smoothing)
	}
	if r != nil && (r.Consecutive < 0 || r.Cooldown < 0 || r.Fraction < 0 || r.Smoothing < 0) {
		return c, fmt.Errorf("fraction %v, consecutive %d, cooldown %v, smoothing %v: want non-negative values (0 keeps a default)", r.Fraction, r.Consecutive, r.Cooldown, r.Smoothing)
	}
	return c, c.Validate()
}
