// Package trace defines the episode trace: what a controller saw, decided
// and achieved at every control interval of one episode, in a file that a
// simulator and a real fabric write alike and that training reads back as
// transitions (s, a, r, s').
//
// # Format
//
// A trace is JSON Lines (one JSON object per line, UTF-8), each line at
// most 16 MiB. Files whose name ends in ".gz" are gzip-compressed, and Open
// refuses such a file that is not; readers also recognise compressed input
// by its magic bytes.
//
// The first line is the episode's Meta:
//
//	{"format":"proflow-trace/1","source":"sim","scenario":"S1","policy":"reactive","seed":1,
//	 "topology":{"switches":["agg1","agg2","agg3","agg4"],"leaves":["leaf1","leaf2","leaf3"],"bucket_rate_bytes_per_sec":25000000},
//	 "flow":"tcp 10.0.0.1:5001->10.0.0.8:5201","initial_switch":0,"interval":"500ms",
//	 "start":"2026-01-01T00:00:00Z","congestion_start":"2026-01-01T00:00:20Z","end":"2026-01-01T00:02:20Z",
//	 "sim_config":{…},"labels":{…}}
//
// format is always "proflow-trace/1"; source is "sim" or the southbound of a
// real fabric; the topology fixes the switch and leaf indices used by every
// step; sim_config (simulated episodes only) is the simulator's Config, so
// the episode can be replayed from (sim_config, scenario, seed).
//
// Every following line is one Step, in time order:
//
//	{"seq":15,"time":"2026-01-01T00:00:07.5Z",
//	 "obs":{"time":"…","switches":[{"tx_rate":…,"overflow_rate":…,"flow_count":2,"elephant_rate":…},…],
//	        "leaves":[{"ingress_rate":…,"transmit_rate":…},…],"flow":{"throughput":…,"congestion_rate":…}},
//	 "switch":0,
//	 "decision":{"reason":"stay","scores":[1,0,0,0],"best":0,"margin":0,"votes":0,"cooldown":"0s","target":-1,"rerouted":false},
//	 "throughput":23150000}
//
// obs is the raw proflow.Observation the step acted on, as measured (with
// noise in a simulation); it is absent when telemetry failed. switch is the
// index of the switch that carried the protected flow while obs was taken
// (k*). decision is the controller's proflow.Decision without its wall-clock
// latency, with the error as text, and with the policy's forecast of the
// flow's next sample ("forecast": {"throughput", "app_limited"}) on the
// steps where it made one (proflow.Forecaster). throughput is the
// protected flow's throughput over the interval in bytes/s: the
// noise-free ground truth in a simulation, the measured value on a real
// fabric. Rates are bytes/s,
// durations Go duration strings, times RFC 3339.
//
// # Transitions
//
// Step i gives the state s (encode Steps[i].Obs with the state encoder, in
// order, from the start of the episode, since the encoder keeps history),
// the action a = Steps[i].Action() (the switch carrying the flow after the
// step), and with step i+1 the next state s' and the reward (computed from
// Steps[i+1].Obs, or from Throughput for evaluation).
//
// # Validation
//
// Writer refuses, and Reader reports with its line number, anything that
// would mislead training: an unknown format, an invalid topology or flow,
// steps that are not numbered and timed in increasing order, switch
// indices out of range, a score per switch missing, non-finite numbers, an
// observation that fails proflow.Observation.Validate or lists an invalid
// flow ID, a reroute that does not move the flow, unknown fields, and a
// line over 16 MiB. Steps are ordered by the wall clock, the time a trace
// records, even where the Writer's times carry a monotonic clock reading.
//
// # Files
//
// Create and WriteFile write to a temporary file beside the target and
// rename it into place only when the trace is complete: a rejected step, an
// I/O error or Writer.Abort leaves any existing file as it was. Read and
// ReadFile return what they could read together with the error: a trace
// cut short by a crash gives its steps up to the damaged line, and an error
// naming that line. Read and ReadFile hold every step in memory, so they
// refuse a trace of more than MaxSteps steps or more than MaxReadBytes bytes
// of lines in the same way; a Reader reads one of any length step by step.
//
// # Concurrency
//
// A Writer or Reader must be used from one goroutine at a time. The value
// types are not synchronised.
package trace
