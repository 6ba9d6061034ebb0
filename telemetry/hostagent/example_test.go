package hostagent_test

import (
	"context"
	"fmt"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/telemetry/hostagent"
)

// An agent's window: four polls 10 ms apart, three of which saw new data
// acknowledged; the report gives the latest srtt and the percentiles of
// the srtt those three read. Read replaces the netlink reader here, so the
// example runs anywhere; Now is a fixed clock.
func Example() {
	flow, _ := proflow.ParseFlowID("tcp 10.0.0.1:40000->10.0.0.8:5201")
	reads := []hostagent.TCPInfo{
		{State: "established", SRTT: 0.020, BytesAcked: 1000},
		{State: "established", SRTT: 0.021, BytesAcked: 2000},
		{State: "established", SRTT: 0.035, BytesAcked: 3000},
		{State: "established", SRTT: 0.022, BytesAcked: 4000},
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cfg := hostagent.DefaultConfig()
	cfg.Flow, cfg.Now = flow, func() time.Time { return now }
	cfg.Read = func(context.Context, proflow.FlowID) (hostagent.TCPInfo, error) {
		r := reads[0]
		reads = reads[1:]
		return r, nil
	}
	a, err := hostagent.New(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer a.Close()
	for range 4 {
		_ = a.Poll(context.Background())
		now = now.Add(10 * time.Millisecond)
	}
	r := a.Report()
	fmt.Printf("%v: srtt %.0f ms, p50 %.0f ms, p99 %.0f ms over %d samples of %d polls\n",
		r.Flow, r.SmoothedRTT*1e3, r.RTTP50*1e3, r.RTTP99*1e3, r.Samples, r.Polls)
	// Output:
	// tcp 10.0.0.1:40000->10.0.0.8:5201: srtt 22 ms, p50 22 ms, p99 35 ms over 3 samples of 4 polls
}
