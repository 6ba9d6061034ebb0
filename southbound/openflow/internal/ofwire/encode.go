package ofwire

import (
	"encoding/binary"
	"fmt"
)

// This file holds the switch side of the wire format: decoding flow-mods and
// encoding statistics replies. The controller does not need it; the fake
// switch its tests run against does, and round trips through it test the
// decoders.

// FlowModMsg is a decoded ofp_flow_mod.
type FlowModMsg struct {
	Cookie, CookieMask       uint64
	Table, Command           uint8
	IdleTimeout, HardTimeout uint16
	Priority                 uint16
	OutPortFilter            uint32
	Flags                    uint16
	Match                    Match
	// OutPort is the first output action's port, 0 when none.
	OutPort uint32
}

const flowModFixed = 40

// ParseFlowMod decodes a flow-mod message body.
func ParseFlowMod(b []byte) (FlowModMsg, error) {
	var f FlowModMsg
	if len(b) < flowModFixed+8 {
		return f, fmt.Errorf("flow-mod: %d bytes, want at least %d: %w", len(b), flowModFixed+8, ErrTruncated)
	}
	f.Cookie, f.CookieMask = be64(b), be64(b[8:])
	f.Table, f.Command = b[16], b[17]
	f.IdleTimeout, f.HardTimeout, f.Priority = be16(b[18:]), be16(b[20:]), be16(b[22:])
	f.OutPortFilter = be32(b[28:])
	f.Flags = be16(b[36:])
	m, n, err := parseMatch(b[flowModFixed:])
	if err != nil {
		return f, fmt.Errorf("flow-mod (cookie %#x): %w", f.Cookie, err)
	}
	f.Match = m
	if f.OutPort, err = firstOutput(b[flowModFixed+n:]); err != nil {
		return f, fmt.Errorf("flow-mod (cookie %#x): %w", f.Cookie, err)
	}
	return f, nil
}

// ParseFlowStatsRequest decodes the body of a flow statistics request
// (after the multipart header) into its cookie and mask.
func ParseFlowStatsRequest(b []byte) (cookie, mask uint64, err error) {
	if len(b) < 32 {
		return 0, 0, fmt.Errorf("flow stats request: %d bytes, want at least 32: %w", len(b), ErrTruncated)
	}
	return be64(b[16:]), be64(b[24:]), nil
}

// ParseFlowStatsRequestMatch decodes the body of a flow statistics request
// into its cookie, mask and match (an empty match when the request carries
// none).
func ParseFlowStatsRequestMatch(b []byte) (cookie, mask uint64, m Match, err error) {
	if cookie, mask, err = ParseFlowStatsRequest(b); err != nil {
		return 0, 0, m, err
	}
	if len(b) == 32 {
		return cookie, mask, m, nil
	}
	if m, _, err = parseMatch(b[32:]); err != nil {
		return 0, 0, m, fmt.Errorf("flow stats request: %w", err)
	}
	return cookie, mask, m, nil
}

// Covers reports whether m, used as a non-strict OpenFlow match (of a
// delete or a statistics request), selects a rule whose match is e: every
// field m sets, e sets to the same value.
func (m Match) Covers(e Match) bool {
	if e.Has&m.Has != m.Has {
		return false
	}
	f := Match{Has: m.Has}
	if m.Has&HasInPort != 0 {
		f.InPort = e.InPort
	}
	if m.Has&HasEthType != 0 {
		f.EthType = e.EthType
	}
	if m.Has&HasIPProto != 0 {
		f.IPProto = e.IPProto
	}
	if m.Has&HasIPSrc != 0 {
		f.IPSrc = e.IPSrc
	}
	if m.Has&HasIPDst != 0 {
		f.IPDst = e.IPDst
	}
	if m.Has&HasL4Src != 0 {
		f.L4Src = e.L4Src
	}
	if m.Has&HasL4Dst != 0 {
		f.L4Dst = e.L4Dst
	}
	if m.Has&HasARPTPA != 0 {
		f.ARPTPA = e.ARPTPA
	}
	return f == m
}

// AppendMultipartHeader appends a multipart reply header.
func AppendMultipartHeader(b []byte, typ, flags uint16) []byte {
	b = binary.BigEndian.AppendUint16(b, typ)
	b = binary.BigEndian.AppendUint16(b, flags)
	return append(b, 0, 0, 0, 0)
}

// AppendPortStats appends the wire form of p.
func AppendPortStats(b []byte, p PortStats) []byte {
	b = binary.BigEndian.AppendUint32(b, p.PortNo)
	b = append(b, 0, 0, 0, 0)
	for _, v := range [...]uint64{p.RxPackets, p.TxPackets, p.RxBytes, p.TxBytes, p.RxDropped, p.TxDropped, p.RxErrors, p.TxErrors, 0, 0, 0, 0} {
		b = binary.BigEndian.AppendUint64(b, v)
	}
	b = binary.BigEndian.AppendUint32(b, p.DurationSec)
	return binary.BigEndian.AppendUint32(b, p.DurationNSec)
}

// AppendMatch appends the OXM wire form of m, padded to 8 bytes.
func AppendMatch(b []byte, m Match) []byte {
	start := len(b)
	b = append(b, 0, 1, 0, 0) // type OXM, length patched below
	field := func(f uint8, v []byte) {
		b = append(b, 0x80, 0x00, f<<1, byte(len(v)))
		b = append(b, v...)
	}
	if m.Has&HasInPort != 0 {
		field(oxmInPort, binary.BigEndian.AppendUint32(nil, m.InPort))
	}
	if m.Has&HasEthType != 0 {
		field(oxmEthType, binary.BigEndian.AppendUint16(nil, m.EthType))
	}
	if m.Has&HasIPProto != 0 {
		field(oxmIPProto, []byte{m.IPProto})
	}
	if m.Has&HasIPSrc != 0 {
		if m.IPSrc.Is4() {
			field(oxmIPv4Src, m.IPSrc.AsSlice())
		} else {
			field(oxmIPv6Src, m.IPSrc.AsSlice())
		}
	}
	if m.Has&HasIPDst != 0 {
		if m.IPDst.Is4() {
			field(oxmIPv4Dst, m.IPDst.AsSlice())
		} else {
			field(oxmIPv6Dst, m.IPDst.AsSlice())
		}
	}
	src, dst := uint8(oxmTCPSrc), uint8(oxmTCPDst)
	if m.IPProto == 17 {
		src, dst = oxmUDPSrc, oxmUDPDst
	}
	if m.Has&HasL4Src != 0 {
		field(src, binary.BigEndian.AppendUint16(nil, m.L4Src))
	}
	if m.Has&HasL4Dst != 0 {
		field(dst, binary.BigEndian.AppendUint16(nil, m.L4Dst))
	}
	if m.Has&HasARPTPA != 0 {
		field(oxmARPTPA, m.ARPTPA.AsSlice())
	}
	binary.BigEndian.PutUint16(b[start+2:], uint16(len(b)-start))
	for (len(b)-start)%8 != 0 {
		b = append(b, 0)
	}
	return b
}

// AppendFlowStats appends the wire form of f, with one apply-actions
// instruction outputting to f.OutPort when it is non-zero.
func AppendFlowStats(b []byte, f FlowStats) []byte {
	start := len(b)
	b = append(b, 0, 0, f.Table, 0)
	b = binary.BigEndian.AppendUint32(b, f.DurationSec)
	b = binary.BigEndian.AppendUint32(b, f.DurationNSec)
	b = binary.BigEndian.AppendUint16(b, f.Priority)
	b = binary.BigEndian.AppendUint16(b, f.IdleTimeout)
	b = binary.BigEndian.AppendUint16(b, f.HardTimeout)
	b = binary.BigEndian.AppendUint16(b, f.Flags)
	b = append(b, 0, 0, 0, 0)
	b = binary.BigEndian.AppendUint64(b, f.Cookie)
	b = binary.BigEndian.AppendUint64(b, f.Packets)
	b = binary.BigEndian.AppendUint64(b, f.Bytes)
	b = AppendMatch(b, f.Match)
	if f.OutPort != 0 {
		b = append(b, 0, 4, 0, 24, 0, 0, 0, 0) // apply-actions, length 24
		b = append(b, 0, 0, 0, 16)             // output, length 16
		b = binary.BigEndian.AppendUint32(b, f.OutPort)
		b = append(b, 0xff, 0xff, 0, 0, 0, 0, 0, 0)
	}
	binary.BigEndian.PutUint16(b[start:], uint16(len(b)-start))
	return b
}

// AppendFeatures appends a features reply body for datapath dpid.
func AppendFeatures(b []byte, dpid uint64) []byte {
	b = binary.BigEndian.AppendUint64(b, dpid)
	b = binary.BigEndian.AppendUint32(b, 0)    // n_buffers
	b = append(b, 254, 0, 0, 0)                // n_tables, aux id, pad
	b = binary.BigEndian.AppendUint32(b, 0x4f) // capabilities
	return binary.BigEndian.AppendUint32(b, 0)
}

// AppendError appends an error message body.
func AppendError(b []byte, typ, code uint16, data []byte) []byte {
	b = binary.BigEndian.AppendUint16(b, typ)
	b = binary.BigEndian.AppendUint16(b, code)
	return append(b, data...)
}
