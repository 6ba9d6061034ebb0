package cluster

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow"

	"github.com/proflow-sdn/proflow/internal/etcdtest"
)

// A replica in a child process (the test binary run again), so that a test
// can kill it with SIGKILL. It reads one command a line on stdin and answers
// one line on stdout:
//
//	save   → "saved N"   SaveFlows of the wanted state of every owned flow
//	owned  → "owned N"   how many shards it owns
const helperEnv = "PROFLOW_CLUSTER_HELPER"

type helperConfig struct {
	Endpoints []string
	Prefix    string
	Replica   string
	TTL       time.Duration
}

func helperMain() int {
	var hc helperConfig
	if err := json.Unmarshal([]byte(os.Getenv(helperEnv)), &hc); err != nil {
		fmt.Println("error", err)
		return 2
	}
	ctx := context.Background()
	m, err := Join(ctx, testConfig(hc.Endpoints, hc.Prefix, hc.Replica, hc.TTL))
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		switch in.Text() {
		case "save":
			flows, _, err := m.ListFlows(ctx)
			if err != nil {
				fmt.Println("error", err)
				continue
			}
			n, err := m.SaveFlows(ctx, wantedStates(m, flows))
			if err != nil {
				fmt.Println("error", err)
				continue
			}
			fmt.Println("saved", n)
		case "owned":
			fmt.Println("owned", len(m.Owned()))
		}
	}
	m.Close(ctx)
	return 0
}

// helper is a child replica.
type helper struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
	mu  sync.Mutex
}

func startHelper(t *testing.T, c *etcdtest.Cluster, prefix, replica string, ttl time.Duration) *helper {
	t.Helper()
	b, _ := json.Marshal(helperConfig{Endpoints: c.Endpoints(), Prefix: prefix, Replica: replica, TTL: ttl})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+string(b))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &helper{cmd: cmd, in: in, out: bufio.NewScanner(out)}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return h
}

// do sends one command and returns the answer's number.
func (h *helper) do(t *testing.T, command string) int {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, err := fmt.Fprintln(h.in, command); err != nil {
		t.Fatalf("helper %s: %v", command, err)
	}
	if !h.out.Scan() {
		t.Fatalf("helper %s: no answer: %v", command, h.out.Err())
	}
	var word string
	var n int
	if _, err := fmt.Sscan(h.out.Text(), &word, &n); err != nil || strings.HasPrefix(h.out.Text(), "error") {
		t.Fatalf("helper %s: %q", command, h.out.Text())
	}
	return n
}

// testConfig is a member's config with a short lease for tests.
func testConfig(endpoints []string, prefix, replica string, ttl time.Duration) Config {
	cfg := DefaultConfig(replica, endpoints...)
	cfg.Prefix = prefix
	cfg.LeaseTTL = ttl
	cfg.KeepAliveInterval = ttl / 6
	cfg.StopWritingAfter = ttl / 2
	cfg.BalanceInterval = ttl / 3
	cfg.RequestTimeout = ttl / 3
	return cfg
}

// testFlows returns n distinct protected flows.
func testFlows(n int) []proflow.ProtectedFlow {
	out := make([]proflow.ProtectedFlow, n)
	for i := range out {
		src := netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)})
		dst := netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)})
		out[i] = proflow.ProtectedFlow{ID: proflow.FlowID{Src: src, Dst: dst, SrcPort: uint16(5000 + i%1000), DstPort: 5201, Proto: proflow.ProtoTCP}}
	}
	return out
}

// wantedState is the placement and baseline the tests store for flow.
func wantedState(flow proflow.FlowID) FlowState {
	h := fnv.New32a()
	h.Write([]byte(flow.String()))
	sw := int(h.Sum32() % 4)
	return FlowState{Flow: flow, Switch: sw, Baseline: &proflow.Baseline{
		Overflow: float64(h.Sum32() % 100000), FlowCount: 12, Throughput: 1.25e6, Switch: sw}}
}

// wantedStates returns the wanted state of every flow m owns.
func wantedStates(m *Member, flows []proflow.ProtectedFlow) []FlowState {
	var out []FlowState
	for _, f := range flows {
		if m.Owns(f.ID) {
			out = append(out, wantedState(f.ID))
		}
	}
	return out
}
