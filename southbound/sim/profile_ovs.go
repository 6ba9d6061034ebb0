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
