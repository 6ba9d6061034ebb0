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
// pid files alone.
//
// Building and tearing down need root, iproute2, ethtool and the
// openvswitch-switch package (make ovs-deps); Check says which is missing.
//
// Names: namespaces and host-side links "<prefix>h<n>", links between
// aggregation switch k and leaf l "<prefix>a<k>l<l>" (aggregation side, where
// the bucket sits) and "<prefix>l<l>a<k>" (leaf side), bridges
// "<prefix>agg<k>" and "<prefix>leaf<l>"; the default prefix is "pf-".
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
// Experiment.Run is one closed-loop episode: it starts the OpenFlow
// controller, builds the fabric, starts the protected flow h1→h8 and the
// proflow controller with a policy, follows the traffic and tears everything
// down.
//
// # Concurrency
//
// A Fabric's methods may be called from several goroutines; Sink and Sender
// are safe to Stop once. Two fabrics coexist on one machine when their
// prefixes, run directories and controller addresses differ.
package ovsfabric
