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
// # Traffic
//
// StartSink and StartSender run a small TCP traffic generator inside a
// host's namespace by re-executing the current binary; a program (or test
// binary) that starts traffic must call MaybeRunTraffic first thing in main
// (or TestMain).
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
