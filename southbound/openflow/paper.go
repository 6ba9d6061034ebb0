package openflow

import (
	"fmt"
	"net/netip"
)

// PaperFabric returns the wiring of the paper's testbed as the
// ovsfabric package builds it: aggregation switches agg1..agg4
// (datapath ids 0x1..0x4) whose port i+1 leads to leaf i+1; leaves
// leaf1..leaf4 (datapath ids 0x11..0x14) whose port k+1 leads to agg k+1 and
// whose ports 11 and 12 hold two hosts; hosts h1..h8 at 10.0.0.1..10.0.0.8,
// h1 and h2 on leaf1, h3 and h4 on leaf2, and so on.
func PaperFabric() Fabric {
	const aggs, leaves, perLeaf = 4, 4, 2
	var f Fabric
	for k := range aggs {
		a := AggSwitch{Name: fmt.Sprintf("agg%d", k+1), DPID: uint64(k + 1)}
		for l := range leaves {
			a.LeafPorts = append(a.LeafPorts, uint32(l+1))
		}
		f.Aggs = append(f.Aggs, a)
	}
	for l := range leaves {
		lf := LeafSwitch{Name: fmt.Sprintf("leaf%d", l+1), DPID: uint64(0x11 + l)}
		for k := range aggs {
			lf.Uplinks = append(lf.Uplinks, uint32(k+1))
		}
		for j := range perLeaf {
			n := l*perLeaf + j + 1
			lf.Hosts = append(lf.Hosts, Host{Name: fmt.Sprintf("h%d", n), Addr: netip.AddrFrom4([4]byte{10, 0, 0, byte(n)}), Port: uint32(11 + j)})
		}
		f.Leaves = append(f.Leaves, lf)
	}
	return f
}
