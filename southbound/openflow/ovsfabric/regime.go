package ovsfabric

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/proflow-sdn/proflow/southbound/sim"
)

// Labels of a trace that record the regime an episode ran in (Config's
// RTT, RTTHosts, CongestionControl, ProtectedRcvBufBytes, HLimitRate and
// HLimitBurst). A setting that is off reads "off"; LabelCongestionControl
// reads the algorithm the senders used, "default:NAME" when the kernel's
// default NAME was left in place.
const (
	LabelRTT               = "rtt"
	LabelRTTHosts          = "rtt_hosts"
	LabelCongestionControl = "congestion_control"
	LabelRcvBuf            = "protected_rcvbuf"
	LabelHLimitRate        = "hlimit_rate"
	LabelHLimitBurst       = "hlimit_burst"
)

// congestionControls are the algorithms the kernel here offers per socket.
var congestionControls = []string{"cubic", "bbr", "reno"}

// validateRegime reports the first problem of the regime's settings.
func (c Config) validateRegime() error {
	if c.RTT < 0 {
		return fmt.Errorf("ovsfabric: RTT %v, want 0 (off) or a positive duration", c.RTT)
	}
	if c.RTT > 0 {
		for _, h := range c.RTTHosts {
			if _, err := hostAddr(c.Wiring, h); err != nil {
				return fmt.Errorf("ovsfabric: RTT hosts: %w", err)
			}
		}
	}
	if c.CongestionControl != "" && !slices.Contains(congestionControls, c.CongestionControl) {
		return fmt.Errorf("ovsfabric: congestion control %q, want one of %s or empty (the kernel's default)",
			c.CongestionControl, strings.Join(congestionControls, ", "))
	}
	if c.ProtectedRcvBufBytes < 0 {
		return fmt.Errorf("ovsfabric: protected flow's receive buffer %d bytes, want 0 (off) or positive", c.ProtectedRcvBufBytes)
	}
	if c.HLimitRate != "" {
		h, err := ParseRate(c.HLimitRate)
		if err != nil {
			return fmt.Errorf("ovsfabric: H-limit: %w", err)
		}
		b, err := ParseRate(c.BucketRate)
		if err != nil {
			return fmt.Errorf("ovsfabric: %w", err)
		}
		if h <= b {
			return fmt.Errorf("ovsfabric: H-limit rate %s, want above the bucket rate %s (the bucket must see what passes it)", c.HLimitRate, c.BucketRate)
		}
	}
	return nil
}

// readDefaultCC reads the kernel's default congestion control in a host's
// namespace (every namespace starts with the initial one's).
func (f *Fabric) readDefaultCC(ctx context.Context) error {
	h := f.cfg.Wiring.Leaves[0].Hosts[0].Name
	out, err := f.Output(ctx, "ip", "netns", "exec", f.NS(h), "sysctl", "-n", "net.ipv4.tcp_congestion_control")
	if err != nil {
		return fmt.Errorf("ovsfabric: kernel's default congestion control: %w", err)
	}
	f.defaultCC = strings.TrimSpace(out)
	return nil
}

// CongestionControl returns what the fabric's senders use: Config's
// CongestionControl, or "default:NAME" with the kernel's default NAME when
// it is empty.
func (f *Fabric) CongestionControl() string {
	if f.cfg.CongestionControl != "" {
		return f.cfg.CongestionControl
	}
	return "default:" + cmp.Or(f.defaultCC, "unknown")
}

// RegimeLabels returns the trace labels (Label…) of the fabric's regime.
func (f *Fabric) RegimeLabels() map[string]string { return f.cfg.regimeLabels(f.CongestionControl()) }

// regimeLabels returns the labels of c's regime, with cc the congestion
// control its senders use.
func (c Config) regimeLabels(cc string) map[string]string {
	l := map[string]string{LabelRTT: "off", LabelRTTHosts: "off", LabelCongestionControl: cc,
		LabelRcvBuf: "off", LabelHLimitRate: "off", LabelHLimitBurst: "off"}
	if c.RTT > 0 {
		l[LabelRTT], l[LabelRTTHosts] = c.RTT.String(), strings.Join(c.RTTHosts, ",")
	}
	if c.ProtectedRcvBufBytes > 0 {
		l[LabelRcvBuf] = strconv.Itoa(c.ProtectedRcvBufBytes)
	}
	if c.HLimitRate != "" {
		l[LabelHLimitRate], l[LabelHLimitBurst] = c.HLimitRate, c.HLimitBurst
	}
	return l
}

// HLimitLag returns how long after the crowd arrives the counted bucket
// runs dry behind an H-limit in the simulator's testbed profile:
// (BucketBurst − UncountedBurst) / (UncountedRate − C), 66 s. Experiment
// adds this lag, divided by the time factor, at HLimitRate − C to the
// counted bucket's burst, so that the real fabric keeps the order of the
// two reserves (the uncounted one runs out first).
func HLimitLag() time.Duration {
	t := sim.TestbedConfig()
	return time.Duration((t.BucketBurst - t.UncountedBurst) / (t.UncountedRate - t.BucketRate) * float64(time.Second))
}

// SocketStats is what `ss -tin` reports of one TCP socket (the kernel's
// TCP_INFO through inet_diag).
type SocketStats struct {
	// CongestionControl is the socket's algorithm ("cubic", "bbr").
	CongestionControl string
	// RTT and RTTVar are the smoothed round-trip time and its variation;
	// MinRTT the least round trip seen (no queueing in it).
	RTT, RTTVar, MinRTT time.Duration
	// Cwnd is the congestion window in segments.
	Cwnd int
	// Retrans is the total of retransmitted segments; Reordering the
	// reordering metric; DSACKDups the duplicate SACKs received.
	Retrans, Reordering, DSACKDups int
	// RcvBufBytes is the socket's receive buffer (skmem rb), when asked.
	RcvBufBytes int
	// Line is ss's line of the socket, for the record.
	Line string
}

var (
	ssRTT     = regexp.MustCompile(`\brtt:([0-9.]+)/([0-9.]+)`)
	ssMinRTT  = regexp.MustCompile(`\bminrtt:([0-9.]+)`)
	ssCwnd    = regexp.MustCompile(`\bcwnd:(\d+)`)
	ssRetrans = regexp.MustCompile(`\bretrans:\d+/(\d+)`)
	ssReord   = regexp.MustCompile(`\breordering:(\d+)`)
	ssDSACK   = regexp.MustCompile(`\bdsack_dups:(\d+)`)
	ssRcvBuf  = regexp.MustCompile(`\brb(\d+)`)
)

// Socket returns ss's view of the established TCP socket in host's
// namespace whose local port is port (the first when several are).
func (f *Fabric) Socket(ctx context.Context, host string, port int) (SocketStats, error) {
	out, err := f.Output(ctx, "ip", "netns", "exec", f.NS(host), "ss", "-tinmH", "state", "established", "sport", "= :"+strconv.Itoa(port))
	if err != nil {
		return SocketStats{}, fmt.Errorf("ovsfabric: socket on %s port %d: %w", host, port, err)
	}
	st, ok := parseSS(out)
	if !ok {
		return SocketStats{}, fmt.Errorf("ovsfabric: socket on %s port %d: no established socket in ss output %q", host, port, out)
	}
	return st, nil
}

// parseSS parses the first socket of `ss -tinmH` output.
func parseSS(out string) (SocketStats, bool) {
	out = strings.TrimSpace(out)
	if out == "" {
		return SocketStats{}, false
	}
	// A socket is a line of addresses followed by indented lines of
	// details; H drops the header.
	lines := strings.Split(out, "\n")
	line := lines[0]
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l, "\t") && !strings.HasPrefix(l, " ") {
			break
		}
		line += " " + strings.TrimSpace(l)
	}
	st := SocketStats{Line: line}
	for _, cc := range congestionControls {
		if strings.Contains(" "+line+" ", " "+cc+" ") {
			st.CongestionControl = cc
		}
	}
	atoi := func(re *regexp.Regexp) int {
		if m := re.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[1])
			return n
		}
		return 0
	}
	if m := ssRTT.FindStringSubmatch(line); m != nil {
		rtt, _ := strconv.ParseFloat(m[1], 64)
		v, _ := strconv.ParseFloat(m[2], 64)
		st.RTT, st.RTTVar = time.Duration(rtt*float64(time.Millisecond)), time.Duration(v*float64(time.Millisecond))
	}
	if m := ssMinRTT.FindStringSubmatch(line); m != nil {
		v, _ := strconv.ParseFloat(m[1], 64)
		st.MinRTT = time.Duration(v * float64(time.Millisecond))
	}
	st.Cwnd, st.Retrans, st.Reordering, st.DSACKDups, st.RcvBufBytes = atoi(ssCwnd), atoi(ssRetrans), atoi(ssReord), atoi(ssDSACK), atoi(ssRcvBuf)
	return st, true
}
