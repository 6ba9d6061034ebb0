package ovsfabric

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/proflow-sdn/proflow/southbound/openflow"
)

// Config holds the settings of a fabric.
type Config struct {
	// RunDir holds the OVS database, sockets, pid files and logs
	// (default /tmp/proflow-ovs). Down removes it.
	RunDir string
	// Prefix starts every namespace, link and bridge name (default "pf-",
	// at most 4 characters so names fit in 15).
	Prefix string
	// Controller is the OpenFlow target of every bridge (default
	// "tcp:127.0.0.1:6653"); "ssl:HOST:PORT" needs the SSL files below.
	Controller string
	// SSLPrivateKey, SSLCertificate and SSLCACert are PEM files: the
	// switches' private key, their certificate (presented to the
	// controller) and the CA certificate that the controller's certificate
	// must chain to. When set (all three or none), Up configures them with
	// `ovs-vsctl set-ssl` before it adds the bridges. ovs-vswitchd reads
	// them, so they must stay in place while the fabric runs.
	SSLPrivateKey, SSLCertificate, SSLCACert string
	// Wiring is the fabric (default openflow.PaperFabric()). Host ports and
	// datapath ids are configured on the bridges as given.
	Wiring openflow.Fabric
	// BucketRate, BucketBurst and BucketLatency configure the tc tbf on
	// every aggregation uplink (defaults "20mbit", "32kb", "50ms"). The
	// paper uses 200 Mbit/s; one userspace bridge carries ~650 Mbit/s on two
	// cores, so the default is scaled down tenfold.
	BucketRate, BucketBurst, BucketLatency string
	// BucketLimit, when set, is the tbf queue in bytes (tc's limit) and
	// replaces BucketLatency: tc adds the burst to the queue a latency
	// implies, which with a large burst (Scale) makes a queue as long as
	// the reserve.
	BucketLimit string
	// Logger receives the commands run (Debug) and progress (Info).
	Logger *slog.Logger

	// The paper's regime (its FABRIC testbed) rather than a data centre's:
	// each setting is off when zero. Experiment records every one of them
	// in its trace's labels (Regime.Labels).

	// RTT, when positive, is the round-trip time a delay line adds to the
	// links of RTTHosts (default h1, the protected flow's sender, so that
	// every path of the protected flow has it): half of it each way. The
	// kernel has no netem; see delayline.go and the package documentation.
	RTT time.Duration
	// RTTHosts are the hosts whose links get the delay line (default
	// ["h1"]).
	RTTHosts []string
	// CongestionControl is the TCP congestion control every sender the
	// fabric starts sets on its sockets (TCP_CONGESTION: "cubic", "bbr",
	// "reno"); empty keeps the kernel's default, which Up reads
	// (Fabric.CongestionControl).
	CongestionControl string
	// ProtectedRcvBufBytes, when positive, is the SO_RCVBUF of the
	// protected flow's sink (Experiment; StartSinkWith for others): its
	// receive window, and so its rate at a given round trip, is capped
	// (the kernel doubles the value for its bookkeeping and turns
	// receive-buffer autotuning off for the socket).
	ProtectedRcvBufBytes int
	// HLimitRate, when set (a tc rate above BucketRate, e.g. "10.5mbit"
	// for 1.05 C), puts a tbf on every leaf's port toward every
	// aggregation switch: a limit upstream of the counted bucket that tc
	// on the aggregation uplink does not count (the simulator's testbed
	// profile, hypothesis H-limit). HLimitBurst is its burst (default
	// BucketBurst); its queue is the bucket's (BucketLimit or
	// BucketLatency).
	HLimitRate, HLimitBurst string
}

// DefaultBucketRateBytes is the default bucket rate in bytes/s (20 Mbit/s).
const DefaultBucketRateBytes = 20e6 / 8

func (c Config) withDefaults() Config {
	c.RunDir = cmp.Or(c.RunDir, "/tmp/proflow-ovs")
	c.Prefix = cmp.Or(c.Prefix, "pf-")
	c.Controller = cmp.Or(c.Controller, "tcp:127.0.0.1:6653")
	if len(c.Wiring.Aggs) == 0 {
		c.Wiring = openflow.PaperFabric()
	}
	c.BucketRate = cmp.Or(c.BucketRate, "20mbit")
	c.BucketBurst = cmp.Or(c.BucketBurst, "32kb")
	c.BucketLatency = cmp.Or(c.BucketLatency, "50ms")
	if c.RTT > 0 && len(c.RTTHosts) == 0 {
		c.RTTHosts = []string{"h1"}
	}
	if c.HLimitRate != "" {
		c.HLimitBurst = cmp.Or(c.HLimitBurst, c.BucketBurst)
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Fabric is a running testbed.
type Fabric struct {
	cfg  Config
	lock *os.File // LockFile, held from Up to Down
	// delayLines run from Up to Down (Config.RTT).
	delayLines []delayLine
	// defaultCC is the kernel's default congestion control, read by Up.
	defaultCC string
}

// Check reports why a fabric cannot be built here (not root, a tool
// missing), or nil.
func Check() error {
	if os.Geteuid() != 0 {
		return errors.New("ovsfabric: needs root (network namespaces, veth, tc)")
	}
	for _, tool := range []string{"ip", "tc", "ethtool", "ovsdb-server", "ovs-vswitchd", "ovs-vsctl", "ovs-ofctl", "ovsdb-tool"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("ovsfabric: %s not found (make ovs-deps installs openvswitch-switch, iproute2, ethtool)", tool)
		}
	}
	if _, err := os.Stat(schemaPath); err != nil {
		return fmt.Errorf("ovsfabric: OVS schema %s: %w", schemaPath, err)
	}
	return nil
}

const schemaPath = "/usr/share/openvswitch/vswitch.ovsschema"

// Names.

// NS returns the namespace of host h (as named in the wiring, e.g. "h1").
func (f *Fabric) NS(host string) string { return f.cfg.Prefix + host }

// AggBridge returns the bridge name of aggregation switch k.
func (f *Fabric) AggBridge(k int) string { return fmt.Sprintf("%sagg%d", f.cfg.Prefix, k+1) }

// LeafBridge returns the bridge name of leaf l.
func (f *Fabric) LeafBridge(l int) string { return fmt.Sprintf("%sleaf%d", f.cfg.Prefix, l+1) }

// UplinkDev returns the aggregation-side device of the link between
// aggregation switch k and leaf l: the one with the token bucket.
func (f *Fabric) UplinkDev(k, l int) string { return fmt.Sprintf("%sa%dl%d", f.cfg.Prefix, k+1, l+1) }

func (f *Fabric) leafDev(k, l int) string { return fmt.Sprintf("%sl%da%d", f.cfg.Prefix, l+1, k+1) }

// HLimitDev returns the leaf-side device of the link between aggregation
// switch k and leaf l: the leaf's egress toward k, where the H-limit's tbf
// sits (Config.HLimitRate).
func (f *Fabric) HLimitDev(k, l int) string { return f.leafDev(k, l) }

// UplinkDevs returns, per aggregation switch, its bucketed devices.
func (f *Fabric) UplinkDevs() [][]string {
	out := make([][]string, len(f.cfg.Wiring.Aggs))
	for k := range f.cfg.Wiring.Aggs {
		for l := range f.cfg.Wiring.Leaves {
			out[k] = append(out[k], f.UplinkDev(k, l))
		}
	}
	return out
}

// Wiring returns the fabric's wiring, for the controller's configuration.
func (f *Fabric) Wiring() openflow.Fabric { return f.cfg.Wiring }

// Config returns the fabric's configuration with defaults filled in.
func (f *Fabric) Config() Config { return f.cfg }

// Up builds the fabric. On failure it removes what it created.
func Up(ctx context.Context, cfg Config) (*Fabric, error) {
	cfg = cfg.withDefaults()
	if len(cfg.Prefix) > 4 {
		return nil, fmt.Errorf("ovsfabric: prefix %q, want at most 4 characters", cfg.Prefix)
	}
	if err := cfg.Wiring.Validate(); err != nil {
		return nil, fmt.Errorf("ovsfabric: wiring: %w", err)
	}
	if err := cfg.validateRegime(); err != nil {
		return nil, err
	}
	if set := countSet(cfg.SSLPrivateKey, cfg.SSLCertificate, cfg.SSLCACert); set != 0 && set != 3 {
		return nil, fmt.Errorf("ovsfabric: SSL private key %q, certificate %q, CA certificate %q: want all three or none",
			cfg.SSLPrivateKey, cfg.SSLCertificate, cfg.SSLCACert)
	}
	if err := Check(); err != nil {
		return nil, err
	}
	lock, err := acquireLock(ctx, LockFile)
	if err != nil {
		return nil, err
	}
	f := &Fabric{cfg: cfg, lock: lock}
	// Leftovers of a crashed run would collide with the names.
	if err := Down(ctx, cfg); err != nil {
		lock.Close()
		return nil, fmt.Errorf("ovsfabric: clean leftovers: %w", err)
	}
	if err := f.up(ctx); err != nil {
		// ctx may be the reason (Ctrl-C while building): remove what was
		// built under a context of its own.
		tctx, cancel := TeardownContext(ctx)
		defer cancel()
		f.stopDelayLines()
		if derr := Down(tctx, cfg); derr != nil {
			err = fmt.Errorf("%w; removing the partly built fabric: %w", err, derr)
		}
		lock.Close()
		return nil, err
	}
	return f, nil
}

func countSet(s ...string) int {
	n := 0
	for _, v := range s {
		if v != "" {
			n++
		}
	}
	return n
}

func (f *Fabric) up(ctx context.Context) error {
	c := f.cfg
	if err := os.MkdirAll(c.RunDir, 0o755); err != nil {
		return fmt.Errorf("ovsfabric: %w", err)
	}
	db := filepath.Join(c.RunDir, "conf.db")
	if err := f.run(ctx, "ovsdb-tool", "create", db, schemaPath); err != nil {
		return err
	}
	if err := f.run(ctx, "ovsdb-server", db, "--remote=p"+f.dbSock(), "--pidfile="+filepath.Join(c.RunDir, "ovsdb-server.pid"),
		"--unixctl="+filepath.Join(c.RunDir, "ovsdb-server.ctl"), "--log-file="+filepath.Join(c.RunDir, "ovsdb-server.log"), "--detach"); err != nil {
		return err
	}
	// max-revalidator: the userspace datapath pushes flow statistics to
	// the OpenFlow tables every 500 ms by default, which aliases with a
	// 500 ms polling interval; 100 ms keeps the counters fresh.
	if err := f.vsctl(ctx, "--no-wait", "init", "--", "set", "open_vswitch", ".", "other_config:max-revalidator=100"); err != nil {
		return err
	}
	if err := f.startSwitchd(ctx); err != nil {
		return err
	}
	c.Logger.Info("ovsfabric: ovs started", "rundir", c.RunDir)

	// Links between aggregation switches and leaves, with the buckets.
	for k := range c.Wiring.Aggs {
		for l := range c.Wiring.Leaves {
			a, b := f.UplinkDev(k, l), f.leafDev(k, l)
			if err := f.run(ctx, "ip", "link", "add", a, "type", "veth", "peer", "name", b); err != nil {
				return err
			}
			for _, d := range []string{a, b} {
				if err := f.linkUp(ctx, "", d); err != nil {
					return err
				}
			}
		}
	}
	// Hosts.
	for _, lf := range c.Wiring.Leaves {
		for _, h := range lf.Hosts {
			ns, dev := f.NS(h.Name), f.cfg.Prefix+h.Name
			if err := f.run(ctx, "ip", "netns", "add", ns); err != nil {
				return err
			}
			if f.delayed(h.Name) {
				if err := f.linkDelayedHost(ctx, h.Name, ns, dev); err != nil {
					return err
				}
			} else {
				if err := f.run(ctx, "ip", "link", "add", dev, "type", "veth", "peer", "name", dev+"n"); err != nil {
					return err
				}
				if err := f.run(ctx, "ip", "link", "set", dev+"n", "netns", ns); err != nil {
					return err
				}
			}
			steps := [][]string{
				{"ip", "-n", ns, "link", "set", dev + "n", "name", "eth0"},
				{"ip", "-n", ns, "addr", "add", h.Addr.String() + "/24", "dev", "eth0"},
				{"ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"},
			}
			for _, s := range steps {
				if err := f.run(ctx, s[0], s[1:]...); err != nil {
					return err
				}
			}
			if err := f.linkUp(ctx, ns, "eth0"); err != nil {
				return err
			}
			if err := f.run(ctx, "ip", "-n", ns, "link", "set", "lo", "up"); err != nil {
				return err
			}
			if err := f.linkUp(ctx, "", dev); err != nil {
				return err
			}
		}
	}
	// SSL (for "ssl:" controller targets), bridges, ports and controllers:
	// one ovs-vsctl transaction.
	args := []string{"--timeout=30"}
	if c.SSLPrivateKey != "" {
		args = append(args, "--", "set-ssl", c.SSLPrivateKey, c.SSLCertificate, c.SSLCACert)
	}
	bridge := func(name string, dpid uint64) {
		args = append(args, "--", "add-br", name,
			"--", "set", "bridge", name, "datapath_type=netdev", "protocols=OpenFlow13", "fail-mode=secure",
			fmt.Sprintf("other-config:datapath-id=%016x", dpid), "other-config:disable-in-band=true",
			"--", "set-controller", name, c.Controller,
			"--", "set", "controller", name, "max_backoff=1000", "inactivity_probe=5000")
	}
	port := func(br, dev string, ofport uint32) {
		args = append(args, "--", "add-port", br, dev, "--", "set", "interface", dev, fmt.Sprintf("ofport_request=%d", ofport))
	}
	for k, a := range c.Wiring.Aggs {
		bridge(f.AggBridge(k), a.DPID)
		for l := range c.Wiring.Leaves {
			port(f.AggBridge(k), f.UplinkDev(k, l), a.LeafPorts[l])
		}
	}
	for l, lf := range c.Wiring.Leaves {
		bridge(f.LeafBridge(l), lf.DPID)
		for k := range c.Wiring.Aggs {
			port(f.LeafBridge(l), f.leafDev(k, l), lf.Uplinks[k])
		}
		for _, h := range lf.Hosts {
			port(f.LeafBridge(l), f.cfg.Prefix+h.Name, h.Port)
		}
	}
	if err := f.vsctl(ctx, args...); err != nil {
		return err
	}
	if err := f.applyBuckets(ctx); err != nil {
		return err
	}
	if err := f.startDelayLines(ctx); err != nil {
		return err
	}
	if err := f.readDefaultCC(ctx); err != nil {
		return err
	}
	c.Logger.Info("ovsfabric: up", "bridges", len(c.Wiring.Aggs)+len(c.Wiring.Leaves), "controller", c.Controller)
	return nil
}

// applyBuckets puts the tbf on every aggregation uplink, and the H-limit's
// on every leaf port toward an aggregation switch when set. It runs after the
// ports joined their bridges: ovs-vswitchd replaces the root qdisc of a port
// it adds (with noqueue) when the port has no QoS of its own.
func (f *Fabric) applyBuckets(ctx context.Context) error {
	c := f.cfg
	for k := range c.Wiring.Aggs {
		for l := range c.Wiring.Leaves {
			queue := []string{"latency", c.BucketLatency}
			if c.BucketLimit != "" {
				queue = []string{"limit", c.BucketLimit}
			}
			args := append([]string{"qdisc", "replace", "dev", f.UplinkDev(k, l), "root", "tbf", "rate", c.BucketRate, "burst", c.BucketBurst}, queue...)
			if err := f.run(ctx, "tc", args...); err != nil {
				return err
			}
			if c.HLimitRate == "" {
				continue
			}
			args = append([]string{"qdisc", "replace", "dev", f.HLimitDev(k, l), "root", "tbf", "rate", c.HLimitRate, "burst", c.HLimitBurst}, queue...)
			if err := f.run(ctx, "tc", args...); err != nil {
				return err
			}
		}
	}
	return nil
}

// MissingBuckets returns the aggregation uplinks (and, with an H-limit, the
// leaf ports toward aggregation switches) whose root qdisc is not the tbf
// Up put there. ovs-vswitchd replaces the root qdisc of a port it
// (re)configures when the port has no QoS of its own; on a loaded machine
// it has done so after Up returned (a static S1 whose bucket never ran dry:
// the uplink passed 3 MB/s through a 10 Mbit/s bucket for 40 s, no
// overlimit counted).
func (f *Fabric) MissingBuckets(ctx context.Context) ([]string, error) {
	var missing []string
	for k := range f.cfg.Wiring.Aggs {
		for l := range f.cfg.Wiring.Leaves {
			devs := []string{f.UplinkDev(k, l)}
			if f.cfg.HLimitRate != "" {
				devs = append(devs, f.HLimitDev(k, l))
			}
			for _, dev := range devs {
				out, err := f.Output(ctx, "tc", "qdisc", "show", "dev", dev, "root")
				if err != nil {
					return nil, err
				}
				if rootQdisc(out) != "tbf" {
					missing = append(missing, dev)
				}
			}
		}
	}
	return missing, nil
}

// EnsureBuckets puts the tbf back on every aggregation uplink that lost it
// (MissingBuckets) and returns the uplinks it restored.
func (f *Fabric) EnsureBuckets(ctx context.Context) ([]string, error) {
	missing, err := f.MissingBuckets(ctx)
	if err != nil || len(missing) == 0 {
		return nil, err
	}
	return missing, f.applyBuckets(ctx)
}

// rootQdisc returns the kind of the root qdisc in `tc qdisc show` output
// ("tbf" in "qdisc tbf 8001: root refcnt 2 rate 10Mbit ..."), or "".
func rootQdisc(out string) string {
	for _, line := range strings.Split(out, "\n") {
		fields := strings.Fields(line)
		if len(fields) >= 4 && fields[0] == "qdisc" && slices.Contains(fields[3:], "root") {
			return fields[1]
		}
	}
	return ""
}

// linkUp sets a device up and turns transmit checksum offload off (TCP
// through the userspace datapath needs it).
func (f *Fabric) linkUp(ctx context.Context, ns, dev string) error {
	if ns == "" {
		// No IPv6 on the root side: its neighbour discovery would reach
		// the switches as traffic no rule matches.
		if err := f.run(ctx, "sysctl", "-qw", "net.ipv6.conf."+dev+".disable_ipv6=1"); err != nil {
			return err
		}
		if err := f.run(ctx, "ip", "link", "set", dev, "up"); err != nil {
			return err
		}
		return f.run(ctx, "ethtool", "-K", dev, "tx", "off")
	}
	if err := f.run(ctx, "ip", "-n", ns, "link", "set", dev, "up"); err != nil {
		return err
	}
	return f.run(ctx, "ip", "netns", "exec", ns, "ethtool", "-K", dev, "tx", "off")
}

func (f *Fabric) env() []string {
	return append(os.Environ(), "OVS_RUNDIR="+f.cfg.RunDir, "OVS_LOGDIR="+f.cfg.RunDir, "OVS_DBDIR="+f.cfg.RunDir)
}

// dbSock is the OVS database's socket, as ovsdb-server's remote and the
// other daemons' database argument name it.
func (f *Fabric) dbSock() string { return "unix:" + filepath.Join(f.cfg.RunDir, "db.sock") }

// startSwitchd starts ovs-vswitchd on the fabric's database, detached, with
// its pid file, control socket and log in the run directory.
func (f *Fabric) startSwitchd(ctx context.Context) error {
	dir := f.cfg.RunDir
	return f.run(ctx, "ovs-vswitchd", f.dbSock(), "--pidfile="+filepath.Join(dir, "ovs-vswitchd.pid"),
		"--unixctl="+filepath.Join(dir, "ovs-vswitchd.ctl"), "--log-file="+filepath.Join(dir, "ovs-vswitchd.log"), "--detach")
}

func (f *Fabric) vsctl(ctx context.Context, args ...string) error {
	return f.run(ctx, "ovs-vsctl", append([]string{"--db=" + f.dbSock()}, args...)...)
}

// Output runs an OVS or iproute2 command with the fabric's OVS environment
// and returns its standard output.
func (f *Fabric) Output(ctx context.Context, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = f.env()
	cmd.SysProcAttr = childAttr()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	f.cfg.Logger.Debug("ovsfabric: run", "cmd", name+" "+strings.Join(args, " "))
	out, err := cmd.Output()
	if err != nil {
		err = fmt.Errorf("ovsfabric: %s %s: %w", name, strings.Join(args, " "), err)
		if msg := bytes.TrimSpace(stderr.Bytes()); len(msg) > 0 {
			err = fmt.Errorf("%w: %s", err, msg)
		}
		return string(out), err
	}
	return string(out), nil
}

func (f *Fabric) run(ctx context.Context, name string, args ...string) error {
	_, err := f.Output(ctx, name, args...)
	return err
}

// DumpFlows returns `ovs-ofctl -O OpenFlow13 dump-flows BRIDGE`.
func (f *Fabric) DumpFlows(ctx context.Context, bridge string) (string, error) {
	return f.Output(ctx, "ovs-ofctl", "-O", "OpenFlow13", "dump-flows", bridge)
}

// tableZero matches table 0's lookup and match counters in ovs-ofctl
// dump-tables output.
var tableZero = regexp.MustCompile(`(?s)\btable 0:.*?lookup=(\d+), matched=(\d+)`)

// TableMisses returns how many packets, summed over every bridge of the
// fabric, found no rule in table 0 since the bridge started (lookups less
// matches; ovs-ofctl dump-tables). The bridges run in fail-mode secure
// with no table-miss rule, so each such packet was dropped: the difference
// of two readings counts the packets lost to missing rules in between.
func (f *Fabric) TableMisses(ctx context.Context) (int64, error) {
	var bridges []string
	for k := range f.cfg.Wiring.Aggs {
		bridges = append(bridges, f.AggBridge(k))
	}
	for l := range f.cfg.Wiring.Leaves {
		bridges = append(bridges, f.LeafBridge(l))
	}
	var sum int64
	for _, br := range bridges {
		out, err := f.Output(ctx, "ovs-ofctl", "-O", "OpenFlow13", "dump-tables", br)
		if err != nil {
			return 0, fmt.Errorf("ovsfabric: table misses of %s: %w", br, err)
		}
		m := tableZero.FindStringSubmatch(out)
		if m == nil {
			return 0, fmt.Errorf("ovsfabric: table misses of %s: no table 0 counters in ovs-ofctl dump-tables output %q", br, out)
		}
		lookup, err1 := strconv.ParseInt(m[1], 10, 64)
		matched, err2 := strconv.ParseInt(m[2], 10, 64)
		if err := errors.Join(err1, err2); err != nil {
			return 0, fmt.Errorf("ovsfabric: table misses of %s: %w", br, err)
		}
		sum += lookup - matched
	}
	return sum, nil
}

// Command returns a command that runs inside host's namespace, in a
// process group of its own that is killed when this process dies (the
// package documentation's Teardown says why). When ctx is done, the
// group gets SIGTERM, and the command is killed 2 s later if it has not
// exited.
func (f *Fabric) Command(ctx context.Context, host string, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", f.NS(host), name}, args...)...)
	cmd.SysProcAttr = childAttr()
	cmd.Cancel = func() error {
		signalGroup(cmd, syscall.SIGTERM)
		return nil
	}
	cmd.WaitDelay = stopGrace
	return cmd
}

// RestartSwitchd kills ovs-vswitchd and starts it again on the same
// database: every bridge comes back with an empty flow table and reconnects
// to the controller.
func (f *Fabric) RestartSwitchd(ctx context.Context) error {
	stopDaemon("ovs-vswitchd", f.cfg.RunDir)
	if err := f.startSwitchd(ctx); err != nil {
		return err
	}
	// Wait until the bridges are configured again, then restore the buckets.
	if err := f.vsctl(ctx, "--timeout=30", "--", "set", "open_vswitch", ".", "other-config:restarted=true"); err != nil {
		return err
	}
	return f.applyBuckets(ctx)
}

// Down removes the fabric.
func (f *Fabric) Down(ctx context.Context) error {
	f.stopDelayLines()
	err := Down(ctx, f.cfg)
	if f.lock != nil {
		f.lock.Close() // releases LockFile
		f.lock = nil
	}
	return err
}

// Down removes every namespace (and the processes in it), link, qdisc and
// OVS process a fabric with this configuration created, and its run
// directory. It works from names and pid files alone, so it also cleans up
// after a crashed run; it is a no-op when nothing is there.
func Down(ctx context.Context, cfg Config) error {
	cfg = cfg.withDefaults()
	f := &Fabric{cfg: cfg}
	var errs []error
	// Processes in our namespaces (traffic generators), then the namespaces.
	out, err := f.Output(ctx, "ip", "netns", "list")
	if err != nil {
		errs = append(errs, err)
	}
	for _, line := range strings.Split(out, "\n") {
		ns, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		if !strings.HasPrefix(ns, cfg.Prefix) {
			continue
		}
		if pids, err := f.Output(ctx, "ip", "netns", "pids", ns); err == nil {
			for _, p := range strings.Fields(pids) {
				if pid, err := strconv.Atoi(p); err == nil {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
		if err := f.run(ctx, "ip", "netns", "del", ns); err != nil {
			errs = append(errs, err)
		}
	}
	// OVS daemons we started, found by the pid file arguments that name
	// our run directory.
	for _, name := range []string{"ovs-vswitchd", "ovsdb-server"} {
		stopDaemon(name, cfg.RunDir)
	}
	// Links (veths and the bridges' tap devices); deleting one end of a
	// veth deletes its peer and its qdisc.
	out, err = f.Output(ctx, "ip", "-o", "link", "show")
	if err != nil {
		errs = append(errs, err)
	}
	for _, line := range strings.Split(out, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimSuffix(fields[1], ":"), "@")
		if !strings.HasPrefix(name, cfg.Prefix) {
			continue
		}
		if err := f.run(ctx, "ip", "link", "del", name); err != nil && !strings.Contains(err.Error(), "Cannot find device") {
			errs = append(errs, err)
		}
	}
	if err := os.RemoveAll(cfg.RunDir); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// stopDaemon ends the OVS daemon name of the fabric whose run directory is
// runDir (daemonPids finds it by its command line, so a missing or stale pid
// file does not hide it): SIGTERM, then SIGKILL if it is still there after
// 5 s. It removes the daemon's pid file.
func stopDaemon(name, runDir string) {
	pids := daemonPids(name, runDir)
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
	for range 50 {
		pids = slices.DeleteFunc(pids, func(pid int) bool { return !alive(pid) })
		if len(pids) == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	_ = os.Remove(filepath.Join(runDir, name+".pid"))
}

// alive reports whether process pid exists and has not exited (a zombie
// waiting for its parent to reap it has).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses and may
	// itself hold spaces or parentheses.
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}
