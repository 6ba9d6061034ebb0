package ovsfabric_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/openflow"
	"github.com/proflow-sdn/proflow/southbound/openflow/ovsfabric"
)

func TestMain(m *testing.M) {
	ovsfabric.MaybeRunTraffic()
	os.Exit(m.Run())
}

func TestSmoke(t *testing.T) {
	requireFabric(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cfg := openflow.DefaultConfig()
	cfg.Fabric = openflow.PaperFabric()
	cfg.Topology = proflow.PaperTopology()
	srv, addr := serveOpenFlow(t, ctx, cfg)

	start := time.Now()
	f, err := ovsfabric.Up(ctx, ovsfabric.Config{Prefix: testPrefix, RunDir: testRunDir, Controller: "tcp:" + addr})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("fabric up in %v", time.Since(start))
	defer func() {
		if err := f.Down(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	if err := srv.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("switches ready after %v", time.Since(start))
	sink, err := f.StartSink(ctx, "h8", 5201)
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Stop()
	time.Sleep(300 * time.Millisecond)
	snd, err := f.StartSender(ctx, "h1", "10.0.0.8:5201", ovsfabric.SenderConfig{BindPort: 40000})
	if err != nil {
		t.Fatal(err)
	}
	defer snd.Stop()
	var received int64
	for range 4 {
		r := <-sink.Reports()
		t.Logf("sink: %.1f Mbit/s", float64(r.Bytes)*8/1e6)
		received += r.Bytes
	}
	if received == 0 {
		t.Error("h8's sink received nothing from h1 in 4 reports: no traffic crosses the fabric")
	}
	q, _ := f.Output(ctx, "tc", "-s", "qdisc", "show", "dev", testPrefix+"a4l4")
	t.Logf("qdisc: %s", q)
	flows, _ := f.DumpFlows(ctx, testPrefix+"leaf1")
	t.Logf("leaf1 flows: %d lines", strings.Count(flows, "\n"))
}
