package tcstat_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/telemetry/tcstat"
)

// An Agent on loopback serves scripted tc counters; a Client turns them into per-switch overflow rates.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	topo := proflow.PaperTopology()

	// Every aggregation switch has a tbf bucket on its uplinks toward
	// leaf3 and leaf4; the scripted tc starts them all at zero.
	tc := &scriptedTC{now: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC), qdiscs: map[string]tcstat.Qdisc{}}
	var devs []string
	srcs := make([]tcstat.Source, topo.NumSwitches())
	for k := range srcs {
		for _, l := range []int{3, 4} {
			dev := fmt.Sprintf("a%d-l%d", k+1, l)
			tc.set(dev, 0, 0)
			devs = append(devs, dev)
			srcs[k].Interfaces = append(srcs[k].Interfaces, dev)
		}
	}

	// The agent: Read replaces the netlink reader, Now stamps its reports
	// with the scripted clock. It serves loopback without a token here;
	// AgentConfig.Token and ServerTLSConfig secure an agent on a network.
	agent, err := tcstat.NewAgent(ctx, tcstat.AgentConfig{Interfaces: devs, Read: tc.read, Now: tc.clock})
	if err != nil {
		fmt.Println(err)
		return
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	serveCtx, stopServing := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- tcstat.Serve(serveCtx, ln, agent) }()
	// The client gets a transport of its own so that its idle keep-alive
	// connection can be closed once the agent is gone.
	transport := &http.Transport{}
	shutdown := sync.OnceValue(func() error {
		stopServing()
		err := <-served
		transport.CloseIdleConnections()
		return err
	})
	defer shutdown()

	// The client reads the same clock, so reports are never too old.
	for k := range srcs {
		srcs[k].Agent = "http://" + ln.Addr().String()
	}
	client, err := tcstat.NewClient(tcstat.ClientConfig{
		Topology: topo, Switches: srcs, Now: tc.clock,
		HTTPClient: &http.Client{Transport: transport},
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	// Overlay fills only OverflowRate; a southbound's Collect normally
	// sizes obs first. Rates need two reports: the first poll is stale.
	var obs proflow.Observation
	obs.Resize(topo)
	err = client.Overlay(ctx, &obs)
	fmt.Println("first poll is stale:", errors.Is(err, proflow.ErrStale))

	// Half a second later agg1's buckets, which carry the congesters, ran
	// dry often; agg3's only now and then.
	tc.advance(500 * time.Millisecond)
	tc.set("a1-l3", 1200, 700)
	tc.set("a1-l4", 1500, 14300)
	tc.set("a2-l4", 800, 0)
	tc.set("a3-l4", 900, 60)
	rep, err := client.Fetch(ctx, srcs[0].Agent)
	if err != nil {
		fmt.Println(err)
		return
	}
	q := rep.Interfaces["a1-l4"]
	fmt.Printf("agent at %s: %d interfaces; a1-l4 %s %d packets, %d overlimits\n",
		rep.Time.Format(time.TimeOnly+".000"), len(rep.Interfaces), q.Kind, q.Packets, q.Overlimits)
	if err := client.Overlay(ctx, &obs); err != nil {
		fmt.Println(err)
		return
	}
	for k, s := range obs.Switches {
		fmt.Printf("%s: %5.0f overlimits/s\n", topo.Switches[k], s.OverflowRate)
	}

	fmt.Println("serve:", shutdown())
	// Output:
	// first poll is stale: true
	// agent at 12:00:00.500: 8 interfaces; a1-l4 tbf 1500 packets, 14300 overlimits
	// agg1: 30000 overlimits/s
	// agg2:     0 overlimits/s
	// agg3:   120 overlimits/s
	// agg4:     0 overlimits/s
	// serve: <nil>
}

// scriptedTC stands in for tc: one tbf root qdisc per interface with the
// counters the example sets, and a clock that moves only when told.
type scriptedTC struct {
	mu     sync.Mutex
	now    time.Time
	qdiscs map[string]tcstat.Qdisc
}

// set gives dev's bucket a total of packets sent (1500 bytes each) and
// overlimits.
func (tc *scriptedTC) set(dev string, packets, overlimits uint64) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	tc.qdiscs[dev] = tcstat.Qdisc{Kind: "tbf", Handle: "8001:", Bytes: 1500 * packets, Packets: packets, Overlimits: overlimits}
}

func (tc *scriptedTC) advance(d time.Duration) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	tc.now = tc.now.Add(d)
}

func (tc *scriptedTC) clock() time.Time {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return tc.now
}

// read returns the root qdiscs' counters, as the kernel would.
func (tc *scriptedTC) read(_ context.Context, devs []string) (map[string]tcstat.Qdisc, error) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	out := make(map[string]tcstat.Qdisc, len(devs))
	for _, d := range devs {
		if q, ok := tc.qdiscs[d]; ok {
			out[d] = q
		}
	}
	return out, nil
}
