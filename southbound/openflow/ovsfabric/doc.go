// Package ovsfabric builds the paper's leaf/aggregation testbed on one Linux
// machine with Open vSwitch's userspace datapath and runs ProFlow's OpenFlow
// southbound against it.
//
// # The fabric
//
// Up builds one bridge per switch (datapath_type=netdev, OpenFlow 1.3,
// fail-mode secure, pointed at a controller), hosts in network namespaces,
// veth links with transmit checksum offload off, and a tc tbf token bucket on
// every aggregation uplink. It starts its own ovsdb-server and ovs-vswitchd
// in a run directory of its own (no kernel module, no system service). Down
// removes everything it created, also after a crash: it works from names and
// the daemons' command lines alone.
//
// Building and tearing down need root, iproute2, ethtool and the
// openvswitch-switch package (make ovs-deps); Check says which is missing.
//
// Names: namespaces and host-side links "<prefix>h<n>", links between
// aggregation switch k and leaf l "<prefix>a<k>l<l>" (aggregation side, where
// the bucket sits) and "<prefix>l<l>a<k>" (leaf side), bridges
// "<prefix>agg<k>" and "<prefix>leaf<l>"; the default prefix is "pf-".
//
// # Teardown
//
// A fabric is torn down by Fabric.Down, which Experiment.Run calls on every
// way out: the episode's end, an error, a cancelled context (Ctrl-C,
// SIGTERM, a closed standard output in proflow). Tear down with a context
// that is not the cancelled one: TeardownContext gives a fresh, bounded one.
//
// Every process the fabric starts is in a process group of its own (a
// terminal's Ctrl-C reaches only the program, which tears down in order) and
// is killed by the kernel when the program dies (Linux's parent-death
// signal), so even a SIGKILL leaves no traffic generator behind. What a
// SIGKILL does leave is what no process holds: the OVS daemons (they detach
// into a session of their own), the namespaces, links and bridges (kernel
// objects) and the run directory. Down with the same prefix and run
// directory (proflow fabric down -prefix P -rundir D) removes them: it kills
// the processes in the fabric's namespaces, deletes the namespaces, stops
// the daemons whose command line names the run directory (pid file or not),
// deletes every link with the prefix and the run directory. Up does the same
// before it builds. The machine-wide lock (LockFile) needs nothing: the
// kernel releases it when the holder exits, however it exits, and no child
// inherits it.
//
// # The paper's regime
//
// As built, the fabric is a data centre's world: sub-millisecond round
// trips, the kernel's default congestion control (BBR here), receive
// buffers that autotune, and the counted bucket as the only limit. Four
// settings of Config (flags of proflow fabric up/run/evaluate) give it the
// paper's FABRIC testbed instead; each is off unless set, and Experiment
// records every one in its trace's labels (LabelRTT, LabelRTTHosts,
// LabelCongestionControl, LabelRcvBuf, LabelHLimitRate, LabelHLimitBurst;
// "off" when off):
//
//   - RTT (-rtt 50ms): this kernel has no netem, so a delay line does it: a
//     process (the current binary, as the traffic generators are) in a
//     namespace of its own, "<prefix>d<host>", between two veths that
//     replace the host's link ("<prefix><host>x" to the host's eth0,
//     "<prefix><host>y" to the leaf's port), reads every frame with an
//     AF_PACKET socket and writes it out of the other side RTT/2 later, in
//     order, both ways (at most 10,000 frames queued each way). It sits on
//     h1's link (RTTHosts), the protected flow's sender, so that every path
//     of the flow, whichever aggregation switch carries it, has the round
//     trip and the congesters keep theirs. Up starts it, Down stops it; it
//     is in a process group of its own with the parent-death signal, and
//     its namespace carries the prefix, so Down after a crash removes it.
//     Verified with `ss -ti` on the protected flow's socket in h1's
//     namespace (Fabric.Socket): minrtt 51.2–52.0 ms and srtt 53–54 ms
//     while healthy, for 50 ms (the delay line's timer and the userspace
//     datapath add 1–2 ms).
//   - CongestionControl (-cc cubic): every sender sets TCP_CONGESTION on
//     its sockets before it connects. Unset, the kernel's default is kept
//     and recorded as "default:NAME" (Fabric.CongestionControl). BBR under
//     a token bucket does not collapse as CUBIC does: CUBIC is the paper's
//     regime, BBR a second condition.
//   - ProtectedRcvBufBytes (-rcvbuf BYTES): SO_RCVBUF on the protected
//     flow's sink before it listens, so the flow is receive-window-limited
//     as the testbed profile's is (its ReceiveWindow ≈ C × RTT). The kernel
//     doubles the value (ss skmem rb) and turns autotuning off; a buffer
//     under 64 kB also turns the window scale off (at most 65,535 B in
//     flight: 10.5 Mbit/s at 50 ms).
//   - HLimitRate (-hlimit 1.05, a multiple of -bucket): a tbf on every
//     leaf's egress toward an aggregation switch (HLimitDev), upstream of
//     the counted bucket on the aggregation uplink and not counted by it:
//     the testbed profile's hypothesis H-limit. Its burst holds the
//     precursor's reserve (Scale.BucketBurstBytes) and the counted bucket's
//     burst grows by HLimitLag (66 s) ÷ the time factor at HLimitRate − C,
//     so the uncounted reserve runs out first and the counted one that
//     long later, as in the profile. It limits each leaf's traffic through
//     a switch, not the switch's sum: a crowd from several leaves passes up
//     to 1.05 C from each.
//
// The scaling of a scenario (Scale) is unchanged by the round trip and the
// window; the H-limit changes the bursts as said.
//
// MoveCost (proflow fabric movecost) measures what a move costs the
// protected flow in whatever regime the fabric has: per move, the time back
// to 90% of its healthy level, its sender's retransmissions, DSACKs and
// reordering (Fabric.Socket) and the table misses. The matrix runs each
// congestion control and round trip asked for over four states of the flow
// when it moves: (a) healthy between two idle switches; (b) healthy, 1 s
// after a crowd arrived while the bucket still has its reserve; (c)
// degraded, under 70% of its healthy rate without RTO backoff; (d)
// collapsed, in RTO backoff. The backoff is the sender's TCP_INFO
// (tcpi_backoff), read every 10 ms with the host agent's inet_diag reader
// (package telemetry/hostagent), which also records the sender's state at
// the move (MoveResult.AtMove, InLoss, InRTO). A c or d move whose state
// is not reached within the collapse time is made anyway and recorded as a
// timeout. With -sim the simulator's testbed profile runs the same cells
// (sim.MoveMatrix) under each move model, H-move, the window halved and
// the measured one (sim.MeasuredMoves), beside the real ones;
// examples/ovsfabric/README.md has a measured matrix.
//
// # Traffic
//
// StartSink and StartSender run a small TCP traffic generator inside a
// host's namespace by re-executing the current binary; a program (or test
// binary) that starts traffic must call MaybeRunTraffic first thing in main
// (or TestMain).
//
// # Flow kinds
//
// The protected flow runs the kind its scenario gives it (package sim's
// FlowKind, the same protected_kind JSON), scaled by Scale.Kind:
//
//   - bulk: one connection paced at the bulk rate (Plan.ProtectedRate),
//     always backlogged.
//   - rate: one connection paced at the kind's rate, a constant bitrate.
//   - onoff: the same pacing during bursts (FlowKind.Sending, its cycle
//     counted from the sender's start: the episode's), nothing in the
//     gaps; each burst's pacing starts afresh, so a burst does not catch
//     up on the gap before it.
//   - rr: one connection; a request of RequestBytes is due every
//     1/RequestRate seconds (periodic) or as a Poisson process seeded from
//     the episode's seed, and is written when due, after the earlier ones.
//     The sink answers every RequestBytes it receives with an 8-byte
//     acknowledgement (the request's number); the client takes each
//     request's completion time from when it was due to when its
//     acknowledgement arrived, and reports every control interval the
//     completions, their median and 99th percentile (RRReport; the oldest
//     request still outstanding counts with its age so far).
//
// Experiment.Run reads the protected flow's latency into its telemetry: a
// hostagent.Agent reads the sender's TCP_INFO in its namespace
// (Fabric.NetNSPath) every 10 ms and, through its HTTP client, writes
// FlowSample.SmoothedRTT and RTTP99 (the window's srtt percentile, package
// hostagent says exactly what it is); an rr flow's latest report writes
// CompletionP99 and Completions. Every kind gets the first two, so every
// trace has them. The trace's protected_kind label (LabelProtectedKind)
// records the kind as run.
//
// # Experiments
//
// Experiment.Run is one closed-loop episode: a scenario of the simulator
// (package sim's JSON: a built-in one or a user's own) under one policy (a
// reference policy or the learned agent, as package policy/eval builds
// them). It starts the OpenFlow controller, builds the fabric, starts the
// protected flow alone and the proflow controller, then starts, moves and
// stops the congesters as the scenario says, and tears everything down.
//
// Scale maps the scenario onto the fabric: times divided by a factor, rates
// scaled to the real bucket, and the tbf burst sized so that congesters on
// the protected flow's switch drain the reserve for the simulator's
// precursor (divided by the same factor) before the protected flow
// degrades. Its documentation gives the arithmetic.
//
//	x := ovsfabric.Experiment{Fabric: ovsfabric.Config{BucketRate: "10mbit"}, Listen: "127.0.0.1:6653",
//		Policy: reactive, Scenario: s1, Scale: ovsfabric.DefaultScale(), Out: os.Stdout}
//	err := x.Run(ctx) // as root, after MaybeRunTraffic in main
//
// # Traces and evaluation
//
// Every episode records its trace in the telemetry/trace format with the
// metadata the simulator writes (scenario, policy, seed and the "repeat"
// label, topology, flow, initial switch, interval, start, congestion start,
// end), Source "openflow", and the scaling as labels; a step's Throughput
// is the protected flow's goodput at its receiver over the last interval.
// A Recorder does the recording: on the simulator it writes, step for
// step, the trace sim.RunEpisode writes. So eval.FromTrace, eval.Summarize
// and calibration read real episodes exactly as they read simulated ones.
// Sweep runs policies × scenarios × repeats, one episode after another.
//
// # Concurrency
//
// A Fabric's methods may be called from several goroutines; Sink and Sender
// are safe to Stop once. Two fabrics coexist on one machine when their
// prefixes, run directories and controller addresses differ.
package ovsfabric
