package openflow

import (
	"net/netip"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/openflow/internal/ofwire"
)

// Cookie layout of every rule the server installs:
//
//	bits 63..48  Config.CookiePrefix (whose rules these are)
//	bits 47..40  kind: 1 base forwarding, 2 flow override
//	bits 39..16  flow tag (overrides: a hash of the FlowID)
//	bits 15..0   generation (overrides: priority − Config.OverridePriority)
//
// With Config.Owner set, override rules carry the owner's cookie instead
// (see Owner); base rules keep this layout.
const (
	kindBase     = 1
	kindOverride = 2

	maskOurs            uint64 = 0xffff << 48
	maskFlow            uint64 = 0xffffffffffff << 16
	prioLocal                  = 200
	prioBase                   = 100
	ethIPv4                    = 0x0800
	ethARP                     = 0x0806
	priorityGenerations        = 4096 // override generations before priorities are renumbered
)

func (s *Server) cookie(kind, tag uint64, gen uint16) uint64 {
	return uint64(s.cfg.CookiePrefix)<<48 | kind<<40 | tag<<16 | uint64(gen)
}

// basePath returns the aggregation switch of the base route between hosts.
func (s *Server) basePath(src, dst int) int {
	n := len(s.cfg.Fabric.Aggs)
	if s.cfg.BasePath != nil {
		if k := s.cfg.BasePath(src, dst); k >= 0 && k < n {
			return k
		}
	}
	return (src + dst) % n
}

// baseRules returns the permanent base forwarding of one switch: delivery
// to local hosts, and per host pair routes (so every aggregation switch keeps
// one counter per direction of each communicating pair). ARP follows the
// same routes by target address.
func (s *Server) baseRules(st *switchState) []ofwire.FlowMod {
	ck := s.cookie(kindBase, 0, 0)
	add := func(out []ofwire.FlowMod, prio uint16, m ofwire.Match, port uint32) []ofwire.FlowMod {
		return append(out, ofwire.FlowMod{Command: ofwire.FlowAdd, Cookie: ck, Priority: prio, Match: m, OutPort: port})
	}
	arp := func(tpa Host) ofwire.Match {
		return ofwire.Match{Has: ofwire.HasEthType | ofwire.HasARPTPA, EthType: ethARP, ARPTPA: tpa.Addr}
	}
	var out []ofwire.FlowMod
	if st.agg >= 0 {
		a := s.cfg.Fabric.Aggs[st.agg]
		for _, d := range s.hosts {
			out = add(out, prioBase, arp(d.Host), a.LeafPorts[d.leaf])
			for _, src := range s.hosts {
				if src.leaf != d.leaf {
					out = add(out, prioBase, pairMatch(src.Addr, d.Addr), a.LeafPorts[d.leaf])
				}
			}
		}
		return out
	}
	lf := s.cfg.Fabric.Leaves[st.leaf]
	for j, d := range s.hosts {
		if d.leaf == st.leaf {
			out = add(out, prioLocal, arp(d.Host), d.Port)
			out = add(out, prioLocal, ofwire.Match{Has: ofwire.HasEthType | ofwire.HasIPDst, EthType: ethIPv4, IPDst: d.Addr}, d.Port)
			continue
		}
		out = add(out, prioBase, arp(d.Host), lf.Uplinks[j%len(lf.Uplinks)])
		for i, src := range s.hosts {
			if src.leaf == st.leaf {
				out = add(out, prioBase, pairMatch(src.Addr, d.Addr), lf.Uplinks[s.basePath(i, j)])
			}
		}
	}
	return out
}

// placement is where the server has put one flow: override rules of one
// generation on the leaves of both ends.
type placement struct {
	flow             proflow.FlowID
	agg              int
	gen              uint16 // 1..priorityGenerations
	srcLeaf, dstLeaf int
	cookie           uint64 // what its rules carry: adds set it, deletes match it exactly
}

// pairMatch matches the IPv4 packets from src to dst: the match of a base
// host-pair rule.
func pairMatch(src, dst netip.Addr) ofwire.Match {
	return ofwire.Match{Has: ofwire.HasEthType | ofwire.HasIPSrc | ofwire.HasIPDst, EthType: ethIPv4, IPSrc: src, IPDst: dst}
}

// flowMatch matches the packets of f: its host pair, narrowed by the
// protocol and ports f sets.
func flowMatch(f proflow.FlowID) ofwire.Match {
	m := pairMatch(f.Src, f.Dst)
	if f.Proto != 0 {
		m.Has, m.IPProto = m.Has|ofwire.HasIPProto, f.Proto
	}
	if f.SrcPort != 0 {
		m.Has, m.L4Src = m.Has|ofwire.HasL4Src, f.SrcPort
	}
	if f.DstPort != 0 {
		m.Has, m.L4Dst = m.Has|ofwire.HasL4Dst, f.DstPort
	}
	return m
}

// rules returns p's override flow-mods for leaf (the forward direction on the
// source leaf, the reverse on the destination leaf) with command cmd.
func (s *Server) rules(p *placement, leaf int, cmd ofwire.FlowModCommand) []ofwire.FlowMod {
	var out []ofwire.FlowMod
	lf := s.cfg.Fabric.Leaves[leaf]
	hard := uint16(0)
	if s.cfg.LeaseTimeout > 0 {
		hard = uint16((s.cfg.LeaseTimeout + 999_999_999) / 1_000_000_000)
	}
	mk := func(m ofwire.Match) ofwire.FlowMod {
		fm := ofwire.FlowMod{Command: cmd, Cookie: p.cookie,
			Priority: s.cfg.OverridePriority + p.gen, Match: m}
		if cmd == ofwire.FlowAdd {
			fm.HardTimeout, fm.OutPort = hard, lf.Uplinks[p.agg]
		} else {
			fm.CookieMask = ^uint64(0)
		}
		return fm
	}
	if leaf == p.srcLeaf {
		out = append(out, mk(flowMatch(p.flow)))
	}
	if leaf == p.dstLeaf {
		out = append(out, mk(flowMatch(p.flow.Reverse())))
	}
	return out
}
