package ovsfabric

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"
)

func TestParseSS(t *testing.T) {
	out := "0      49152  10.0.0.1:40000 10.0.0.8:5201\n\t skmem:(r0,rb131072,t0,tb258048,f1408,w64128,o0,bl0,d0) cubic wscale:1,10 rto:256 rtt:53.967/0.547 mss:1448 cwnd:120 retrans:0/79 reordering:4 dsack_dups:2 rcv_rtt:1.5 minrtt:51.969 snd_wnd:81400\n"
	st, ok := parseSS(out)
	if !ok {
		t.Fatal("parseSS found no socket")
	}
	want := SocketStats{CongestionControl: "cubic", RTT: 53967 * time.Microsecond, RTTVar: 547 * time.Microsecond, MinRTT: 51969 * time.Microsecond,
		Cwnd: 120, Retrans: 79, Reordering: 4, DSACKDups: 2, RcvBufBytes: 131072}
	st.Line = ""
	if st != want {
		t.Errorf("parseSS = %+v, want %+v", st, want)
	}
	if _, ok := parseSS("  \n"); ok {
		t.Error("parseSS found a socket in empty output")
	}
}

func TestValidateRegime(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string // in the error; "" for none
	}{
		{Config{}, ""},
		{Config{RTT: 50 * time.Millisecond, CongestionControl: "cubic", ProtectedRcvBufBytes: 1 << 16, HLimitRate: "10500kbit"}, ""},
		{Config{RTT: -time.Millisecond}, "RTT"},
		{Config{RTT: time.Millisecond, RTTHosts: []string{"h9"}}, "h9"},
		{Config{CongestionControl: "vegas"}, "vegas"},
		{Config{ProtectedRcvBufBytes: -1}, "-1"},
		{Config{HLimitRate: "9mbit"}, "above the bucket rate"},
	} {
		c.cfg.BucketRate = "10mbit"
		err := c.cfg.withDefaults().validateRegime()
		if (err == nil) != (c.want == "") || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("validateRegime(%+v) = %v, want an error with %q", c.cfg, err, c.want)
		}
	}
}

func TestRegimeFlags(t *testing.T) {
	var f CommandFlags
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	f.Register(fs, "run")
	if err := fs.Parse([]string{"-rtt", "50ms", "-cc", "cubic", "-rcvbuf", "65536", "-hlimit", "1.05"}); err != nil {
		t.Fatal(err)
	}
	c := f.Config(io.Discard)
	if c.RTT != 50*time.Millisecond || strings.Join(c.RTTHosts, ",") != "h1" || c.CongestionControl != "cubic" ||
		c.ProtectedRcvBufBytes != 65536 || c.HLimitRate != "10500kbit" {
		t.Errorf("Config from the regime flags = RTT %v hosts %v cc %q rcvbuf %d H-limit %q", c.RTT, c.RTTHosts, c.CongestionControl, c.ProtectedRcvBufBytes, c.HLimitRate)
	}
	l := c.withDefaults().regimeLabels("cubic")
	if l[LabelRTT] != "50ms" || l[LabelHLimitBurst] != "32kb" || l[LabelRcvBuf] != "65536" {
		t.Errorf("labels %v", l)
	}
	off := Config{}.withDefaults().regimeLabels("default:bbr")
	for _, k := range []string{LabelRTT, LabelRTTHosts, LabelRcvBuf, LabelHLimitRate, LabelHLimitBurst} {
		if off[k] != "off" {
			t.Errorf("label %s of the default regime %q, want off", k, off[k])
		}
	}
	if off[LabelCongestionControl] != "default:bbr" {
		t.Errorf("congestion control label %q, want default:bbr", off[LabelCongestionControl])
	}
	if lag := HLimitLag(); lag != 66*time.Second {
		t.Errorf("HLimitLag() = %v, want 66s (the testbed profile)", lag)
	}
}
