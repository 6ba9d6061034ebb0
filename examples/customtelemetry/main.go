// Command customtelemetry shows how to plug your own telemetry into proflow.
//
// The telemetry here is user code: it replays observations that a monitoring
// system exported as JSON lines (one proflow.Observation per line, the
// format of samples.jsonl beside this file). A logging Enforcer prints the
// moves a real southbound would make, and the crowd reference policy decides.
// The controller runs on virtual time driven by the samples' timestamps, so
// the 40 s recording replays instantly.
//
//	go run ./examples/customtelemetry                 # the bundled recording
//	go run ./examples/customtelemetry -file mine.jsonl -policy reactive
package main

import (
	"bufio"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/telemetry"
)

//go:embed samples.jsonl
var samples string

func main() {
	file := flag.String("file", "", "JSON-lines file of proflow.Observation samples (default: the bundled recording)")
	pol := flag.String("policy", "crowd", "reference policy: crowd, reactive or static")
	verbose := flag.Bool("v", false, "log every decision")
	flag.Parse()
	if err := run(context.Background(), *file, *pol, *verbose, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "customtelemetry:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, file, policyName string, verbose bool, out io.Writer) error {
	var src io.Reader = strings.NewReader(samples)
	if file != "" {
		f, err := os.Open(file)
		if err != nil {
			return err
		}
		defer f.Close()
		src = f
	}
	topo := proflow.PaperTopology()
	tel := newReplay(src)

	pol, gate, err := referencePolicy(policyName)
	if err != nil {
		return err
	}
	enc, err := telemetry.NewEncoder(telemetry.DefaultEncoderConfig(topo))
	if err != nil {
		return err
	}
	level := slog.LevelInfo
	if verbose {
		level = slog.LevelDebug
	}
	cfg := proflow.DefaultConfig()
	cfg.Topology = topo
	cfg.Flow = proflow.FlowID{
		Src: netip.MustParseAddr("10.0.4.1"), Dst: netip.MustParseAddr("10.0.1.1"),
		SrcPort: 40000, DstPort: 5201, Proto: proflow.ProtoTCP,
	}
	cfg.Clock = tel       // virtual time: the replay's own timestamps
	cfg.MaxSampleAge = -1 // a recording is old by definition
	cfg.Logger = slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{
		Level: level,
		// The decision's own "at" attribute carries the recording's time.
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
	ctrl, err := proflow.NewController(cfg, tel, enc, pol, gate, logEnforcer{out: out, topo: topo})
	if err != nil {
		return err
	}

	fmt.Fprintf(out, "replaying telemetry with the %s policy; flow %v starts on %s\n",
		policyName, cfg.Flow, topo.Switches[ctrl.Current()])
	for {
		d := ctrl.Step(ctx)
		if errors.Is(d.Err, io.EOF) {
			break
		}
		if d.Err != nil && !d.Reason.Held() {
			return d.Err
		}
	}
	b, _ := ctrl.Baseline()
	fmt.Fprintf(out, "end of recording: flow on %s (baseline throughput %.1f MB/s, overflow %.0f B/s, %.0f flows)\n",
		topo.Switches[ctrl.Current()], b.Throughput/1e6, b.Overflow, b.FlowCount)
	return nil
}

func referencePolicy(name string) (proflow.Policy, proflow.Gate, error) {
	switch name {
	case "crowd":
		p, err := policy.NewCrowd(policy.DefaultCrowdConfig())
		return p, policy.Immediate(), err
	case "reactive":
		p, err := policy.NewReactive(policy.DefaultReactiveConfig())
		return p, policy.Immediate(), err
	case "static":
		return policy.Static{}, policy.Immediate(), nil
	}
	return nil, nil, fmt.Errorf("unknown policy %q, want crowd, reactive or static", name)
}

// replay is the user-written telemetry source: each Collect delivers the
// next exported observation. It doubles as the controller's clock: Now is
// the time of the sample the next Collect delivers, so the loop runs on the
// recording's time line.
type replay struct {
	mu   sync.Mutex
	sc   *bufio.Scanner
	line int
	next proflow.Observation
	err  error // what the next Collect returns instead of a sample
}

func newReplay(r io.Reader) *replay {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	p := &replay{sc: sc}
	p.advance()
	return p
}

// advance decodes the next line into r.next, or records why it cannot.
func (r *replay) advance() {
	if !r.sc.Scan() {
		r.err = io.EOF
		if err := r.sc.Err(); err != nil {
			r.err = fmt.Errorf("replay: line %d: %w", r.line+1, err)
		}
		return
	}
	r.line++
	last := r.next.Time
	r.next = proflow.Observation{}
	if err := json.Unmarshal(r.sc.Bytes(), &r.next); err != nil {
		r.err = fmt.Errorf("replay: line %d: %w", r.line, err)
		r.next.Time = last
	}
}

// Collect implements proflow.Telemetry.
func (r *replay) Collect(ctx context.Context, obs *proflow.Observation) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return r.err
	}
	obs.CopyFrom(&r.next)
	r.advance()
	return nil
}

// Now implements proflow.Clock: the time of the sample Collect delivers next.
func (r *replay) Now() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.next.Time
}

// NewTicker implements proflow.Clock. The example drives Step itself, so
// the ticker never fires.
func (r *replay) NewTicker(time.Duration) proflow.Ticker { return idleTicker{} }

type idleTicker struct{}

func (idleTicker) C() <-chan time.Time { return nil }
func (idleTicker) Stop()               {}

// logEnforcer prints the rules a southbound would install.
type logEnforcer struct {
	out  io.Writer
	topo proflow.Topology
}

// Place implements proflow.Enforcer.
func (e logEnforcer) Place(_ context.Context, flow proflow.FlowID, sw int) error {
	if sw < 0 || sw >= e.topo.NumSwitches() {
		return &proflow.UnknownSwitchError{Index: sw, Known: e.topo.Switches}
	}
	fmt.Fprintf(e.out, "enforcer: install %v via %s (and the reverse direction)\n", flow, e.topo.Switches[sw])
	return nil
}
