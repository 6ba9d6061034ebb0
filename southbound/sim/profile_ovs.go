package sim

import "time"

// OVSConfig returns the ovs profile: the simulated twin of the real Open
// vSwitch fabric that package southbound/openflow/ovsfabric builds on one
// machine (userspace bridges, veth links, tc tbf on the aggregation
// uplinks) at its default scale, a 10 Mbit/s bucket and -time-factor 2.
// Every value is a setting of that fabric or a measurement on it; the
// package documentation ("Profile ovs") gives each with the command that
// measured it.
func OVSConfig() Config {
	c := DefaultConfig()
	c.Name = ProfileOVS
	c.BucketRate = 10e6 / 8             // tc tbf rate (fabric run -bucket 10mbit)
	c.BucketBurst = 13_875_000          // tc tbf burst at -time-factor 2 (ovsfabric.Scale)
	c.BucketQueueLimit = 62_500         // tc tbf limit: 50 ms of tokens
	c.FlowRateLimit = 0                 // no fq on the fabric's uplinks
	c.ReceiveWindow = 5980              // measured lone goodput × BaseRTT
	c.HostLinkRate = 1.5 * c.BucketRate // five paced full-rate congesters
	c.HostQueueLimit = 93_750           // 50 ms at HostLinkRate, like the tbf queue
	c.FabricLinkRate = 650e6 / 8        // one userspace bridge's TCP throughput
	c.BaseRTT = 5 * time.Millisecond    // median srtt of the lone protected flow
	c.ControllerWarmup = time.Second    // the lone flow's ramp-up, measured
	return c
}

// OVSRegimeConfig returns the ovs-regime profile: the same fabric in the
// paper's regime, as `proflow fabric run|evaluate -rtt 50ms -cc cubic
// -rcvbuf 57344 -hlimit 1.05` builds it (a 50 ms delay line on h1's link,
// CUBIC on every sender, a 56 kB receive buffer at the protected flow's
// sink, a tbf at 1.05 C on every leaf port toward an aggregation switch).
// Every value changed from OVSConfig is a setting of that fabric or a
// measurement on it; the package documentation ("Profile ovs-regime")
// gives each with the command that measured it. Moves follow the model
// fitted to the fabric's move-cost matrix (MeasuredMoves).
func OVSRegimeConfig() Config {
	c := MeasuredMoves(OVSConfig())
	c.Name = ProfileOVSRegime
	c.BaseRTT = 53 * time.Millisecond // median srtt of the lone protected flow, 53.4 ms
	c.RTTJitter = 0.03                // its srtt's spread, 52.4–56.6 ms
	c.ReceiveWindow = 64_300          // measured lone goodput × srtt: 1.204 MB/s × 53.4 ms
	// The counted tbf's burst with -hlimit (trace label bucket_burst): the
	// ovs profile's plus HLimitLag ÷ 2 at 0.05 C.
	c.BucketBurst = 13_875_000 + 2_062_500
	c.CubicResetOnTimeout = true // Linux CUBIC, as in the testbed profile
	c.HyStartAckTrain = true
	c.ControllerWarmup = time.Second // 5.0 Mbit/s in the first second, 9.4 in the second
	return c
}
