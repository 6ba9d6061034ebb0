package ovsfabric

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"strconv"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/telemetry/trace"
)

// TraceSource is the Meta.Source of the traces a real episode writes: the
// southbound that measured them.
const TraceSource = "openflow"

// TraceName returns the file name of an episode's trace, as the simulated
// evaluation names its own: SCENARIO-POLICY-rREPEAT.jsonl.gz.
func TraceName(scenario, policy string, repeat int) string {
	return fmt.Sprintf("%s-%s-r%d.jsonl.gz", scenario, policy, repeat)
}

// Recorder keeps the trace of a controller's episode on a real fabric, as
// the simulator's episodes record theirs: it is the controller's Telemetry
// (it passes Collect through and remembers which observation the controller
// received), and its Observe, the controller's Observer, turns every
// Decision into a trace step with a copy of that observation and the
// protected flow's throughput as the throughput function reads it then. The
// controller reports its decision within the step whose Collect filled the
// observation and does not change it in between, so the copy is exactly
// what the step acted on.
//
// Collect and Observe are called by the controller's goroutine, one after
// the other; Episode must be called once the controller has stopped.
type Recorder struct {
	tel        proflow.Telemetry
	throughput func() float64
	last       *proflow.Observation // filled by the current step's Collect; nil after a failure
	steps      []trace.Step
}

// NewRecorder returns a recorder of tel. throughput returns the protected
// flow's throughput over the last interval in bytes/s, as measured at its
// receiver.
func NewRecorder(tel proflow.Telemetry, throughput func() float64) *Recorder {
	return &Recorder{tel: tel, throughput: throughput}
}

// Collect implements proflow.Telemetry.
func (r *Recorder) Collect(ctx context.Context, obs *proflow.Observation) error {
	err := r.tel.Collect(ctx, obs)
	if r.last = obs; err != nil {
		r.last = nil
	}
	return err
}

// Peek implements proflow.Peeker by passing Peek through to the recorded
// telemetry, so that the controller can recheck a move its gate deferred;
// the trace keeps the step's observation, not the peek. The experiment's
// telemetry (the OpenFlow server merged with its overlays) peeks; with one
// that cannot, Peek fails and the controller holds at the recheck.
func (r *Recorder) Peek(ctx context.Context, obs *proflow.Observation) error {
	p, ok := r.tel.(proflow.Peeker)
	if !ok {
		return fmt.Errorf("ovsfabric: recorder: %T cannot peek", r.tel)
	}
	return p.Peek(ctx, obs)
}

// Observe records one decision; use it as (or call it from)
// proflow.Config.Observer. A recheck's decision (proflow.Decision
// Rechecking) goes into the step it rechecks (trace.Step.Recheck).
func (r *Recorder) Observe(d proflow.Decision) {
	if d.Rechecking {
		if n := len(r.steps); n > 0 && r.steps[n-1].Seq == d.Seq {
			r.steps[n-1].Recheck = &trace.Recheck{Time: d.Time, Load: d.Load, Decision: trace.FromDecision(d)}
		}
		return
	}
	st := trace.Step{Seq: d.Seq, Time: d.Time, Switch: d.Current, Decision: trace.FromDecision(d), Throughput: r.throughput()}
	switch d.Reason {
	case proflow.ReasonTelemetry, proflow.ReasonInvalid, proflow.ReasonStale:
		// The step acted on no observation.
	default:
		if r.last != nil {
			st.Obs = r.last.Clone()
		}
	}
	r.last = nil
	r.steps = append(r.steps, st)
}

// Episode returns the recorded trace under meta (Format filled in), with
// the steps up to meta.End when it is set, and checks it as a trace file
// would be checked.
func (r *Recorder) Episode(meta trace.Meta) (*trace.Episode, error) {
	meta.Format = trace.Format
	ep := &trace.Episode{Meta: meta}
	for _, st := range r.steps {
		if !meta.End.IsZero() && st.Time.After(meta.End) {
			break
		}
		ep.Steps = append(ep.Steps, st)
	}
	if err := trace.Write(io.Discard, ep); err != nil {
		return nil, fmt.Errorf("ovsfabric: trace of %s/%s: %w", meta.Scenario, meta.Policy, err)
	}
	return ep, nil
}

// LabelTableMisses is the trace label that holds how many packets found no
// rule in any bridge of the fabric during the episode (Fabric.TableMisses
// at its end less at its start, the protected flow's first packet
// included): a reroute that is make-before-break loses none.
const LabelTableMisses = "table_misses"

// LabelBucketsLost is the trace label holding how many aggregation uplinks
// had lost their tbf by the end of the episode (Fabric.MissingBuckets): an
// episode with any ran without the buckets its scenario assumes and should
// be discarded.
const LabelBucketsLost = "buckets_lost"

// LabelProtectedKind is the trace label holding the protected flow's kind
// as the fabric ran it (scaled, Scale.Kind): "bulk", or the kind's name
// and its JSON, for example `rr {"kind":"rr","request_bytes":1638,…}`.
const LabelProtectedKind = "protected_kind"

// traceMeta is the metadata of the episode r ran: the fields the
// simulator writes, with the real fabric's scaling as labels.
func (r *run) traceMeta() trace.Meta {
	labels := map[string]string{
		"repeat":            strconv.Itoa(r.x.Repeat),
		"fabric":            "ovs",
		"time_factor":       strconv.FormatFloat(r.scale.TimeFactor, 'g', -1, 64),
		"bucket_rate":       r.x.Fabric.BucketRate,
		"bucket_burst":      r.x.Fabric.BucketBurst,
		"bucket_limit":      r.x.Fabric.BucketLimit,
		"scaled_from_sim":   r.scale.Sim.Name,
		"full_rate_share":   strconv.FormatFloat(r.scale.FullRateShare, 'g', -1, 64),
		"sim_config_digest": r.scale.Sim.Digest(),
		LabelProtectedKind:  kindString(r.plan.Kind),
	}
	cc := r.x.Fabric.CongestionControl
	if r.f != nil {
		cc = r.f.CongestionControl()
	}
	maps.Copy(labels, r.x.Fabric.regimeLabels(cmp.Or(cc, "default:unknown")))
	if r.misses >= 0 {
		labels[LabelTableMisses] = strconv.FormatInt(r.misses, 10)
	}
	if r.bucketsLost >= 0 {
		labels[LabelBucketsLost] = strconv.Itoa(r.bucketsLost)
	}
	for k, v := range r.x.Labels {
		labels[k] = v
	}
	return trace.Meta{Source: TraceSource, Scenario: r.plan.Scenario, Policy: r.x.Policy.Name, Seed: r.x.Seed,
		Topology: r.topo, Flow: r.flow, InitialSwitch: r.plan.ProtectedSwitch, Interval: trace.Duration(r.interval),
		Start: r.start, CongestionStart: r.start.Add(r.plan.CongestionStart), End: r.start.Add(r.plan.End), Labels: labels}
}

// lastThroughput converts a sink report to bytes/s over its interval.
func lastThroughput(rep SinkReport, every time.Duration) float64 {
	return float64(rep.Bytes) / every.Seconds()
}
