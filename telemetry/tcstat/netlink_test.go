package tcstat_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow/telemetry/tcstat"
)

// testNetns creates a fresh network namespace holding a veth pair v0-v1,
// with a tbf bucket of 1 Mbit/s on v0 and 192.0.2.1/24 on v0 (192.0.2.2 a
// static neighbour behind it), and returns its name and a function that
// sends n UDP packets of 1400 bytes out of v0. Nothing leaves the
// namespace. It skips the test without root or iproute2 (capabilities
// this machine lacks); as root with the tools present, a namespace that
// cannot be made is a failed setup and fails the test.
func testNetns(t *testing.T) (name string, send func(n int)) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipping: creating a network namespace with a veth pair and a tbf qdisc needs root")
	}
	for _, bin := range []string{"ip", "tc", "bash"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("skipping: %s is not installed (iproute2 and bash are needed)", bin)
		}
	}
	name = fmt.Sprintf("pf-tcstat-%d", os.Getpid())
	if err := run("ip", "netns", "add", name); err != nil {
		t.Fatalf("create the test's network namespace as root: %v", err)
	}
	t.Cleanup(func() { _ = run("ip", "netns", "del", name) })
	for _, args := range [][]string{
		{"ip", "-n", name, "link", "add", "v0", "type", "veth", "peer", "name", "v1"},
		{"ip", "-n", name, "link", "set", "v0", "up"},
		{"ip", "-n", name, "link", "set", "v1", "up"},
		{"ip", "-n", name, "addr", "add", "192.0.2.1/24", "dev", "v0"},
		{"ip", "-n", name, "neigh", "add", "192.0.2.2", "lladdr", "02:00:00:00:00:02", "dev", "v0", "nud", "permanent"},
		{"tc", "-n", name, "qdisc", "add", "dev", "v0", "root", "tbf", "rate", "1mbit", "burst", "1600", "latency", "50ms"},
	} {
		if err := run(args...); err != nil {
			t.Fatal(err)
		}
	}
	return name, func(n int) {
		t.Helper()
		script := fmt.Sprintf(`for i in $(seq %d); do printf "%%1400s" x > /dev/udp/192.0.2.2/9; done`, n)
		if err := run("ip", "netns", "exec", name, "bash", "-c", script); err != nil {
			t.Fatal(err)
		}
	}
}

func run(args ...string) error {
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

// tcRootQdisc runs tc in the namespace until two reads of dev's root qdisc
// agree (the bucket has drained), and returns that qdisc.
func tcRootQdisc(t *testing.T, ns, dev string) tcstat.Qdisc {
	t.Helper()
	var prev tcstat.Qdisc
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		out, err := exec.Command("tc", "-n", ns, "-s", "-j", "qdisc", "show", "dev", dev).Output()
		if err != nil {
			t.Fatalf("tc qdisc show: %v", err)
		}
		q, err := tcstat.ParseTC(out)
		if err != nil {
			t.Fatal(err)
		}
		if q == prev && q.BacklogPackets == 0 {
			return q
		}
		prev = q
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the counters of %s did not settle within 5 s: %+v", dev, prev)
	return prev
}

// TestAgentNetlink reads a real tbf bucket through netlink, in a fresh
// network namespace, and checks it against tc.
func TestAgentNetlink(t *testing.T) {
	ns, send := testNetns(t)
	nsPath := "/run/netns/" + ns
	ctx := context.Background()

	_, err := tcstat.NewAgent(ctx, tcstat.AgentConfig{Interfaces: []string{"v0", "eth9"}, NetNS: nsPath})
	if err == nil || !strings.Contains(err.Error(), `"eth9"`) || !strings.Contains(err.Error(), nsPath) {
		t.Errorf("NewAgent with an interface missing from the namespace: %v, want an error naming it and the namespace", err)
	}
	if _, err := tcstat.NewAgent(ctx, tcstat.AgentConfig{Interfaces: []string{"v0"}, NetNS: "/run/netns/none-such"}); err == nil ||
		!strings.Contains(err.Error(), "none-such") {
		t.Errorf("NewAgent in a missing namespace: %v, want an error naming it", err)
	}

	a, err := tcstat.NewAgent(ctx, tcstat.AgentConfig{Interfaces: []string{"v0", "v1"}, NetNS: nsPath, CacheFor: -1})
	if err != nil {
		t.Fatal(err)
	}
	send(40) // 56 kB into a 1600-byte bucket: throttled, overlimits counted
	want := tcRootQdisc(t, ns, "v0")
	r, err := a.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Interfaces["v0"]; got != want {
		t.Errorf("netlink read of v0: %+v, want what tc reads: %+v", got, want)
	}
	if q := r.Interfaces["v0"]; q.Kind != "tbf" || q.Packets == 0 || q.Overlimits == 0 {
		t.Errorf("v0 after a burst: %+v, want a tbf that sent packets and counted overlimits", q)
	}
	if q := r.Interfaces["v1"]; q.Kind != "noqueue" {
		t.Errorf("v1 root qdisc %+v, want veth's default noqueue", q)
	}

	// A device that disappears after the start is an error naming it.
	if err := run("ip", "-n", ns, "link", "del", "v0"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Read(ctx); err == nil || !strings.Contains(err.Error(), `"v0"`) {
		t.Errorf("Read of a deleted device: %v, want an error naming it", err)
	}
}

// TestAgentNetlinkOwnNamespace reads loopback's root qdisc in the test's
// own namespace: no root needed.
func TestAgentNetlinkOwnNamespace(t *testing.T) {
	a, err := tcstat.NewAgent(context.Background(), tcstat.AgentConfig{Interfaces: []string{"lo"}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := a.Read(context.Background(), "lo")
	if err != nil {
		t.Fatal(err)
	}
	if q := r.Interfaces["lo"]; q.Kind == "" {
		t.Errorf("lo root qdisc %+v, want a kind", q)
	}
	if _, err := tcstat.NewAgent(context.Background(), tcstat.AgentConfig{Interfaces: []string{"no-such-dev0"}}); err == nil ||
		!strings.Contains(err.Error(), `"no-such-dev0"`) {
		t.Errorf("NewAgent on a missing device: %v, want an error naming it", err)
	}
}
