// Package ofwire holds the OpenFlow 1.3 wire details of the openflow
// southbound: decoding of the replies the controller reads (features,
// errors, multipart port and flow statistics with their OXM matches and
// output actions) and building of the requests it sends on top of
// github.com/netrack/openflow.
//
// Decoders never panic: malformed input is an error naming the field and
// the offset.
package ofwire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
)

// Version is the OpenFlow protocol version spoken: 1.3.
const Version = 0x04

// Multipart types (ofp_multipart_type) used by the controller.
const (
	MultipartFlow      uint16 = 1
	MultipartPortStats uint16 = 4
)

// ReplyMore is OFPMPF_REPLY_MORE: more parts of this reply follow.
const ReplyMore uint16 = 1

// ErrTruncated marks input shorter than its declared structure.
var ErrTruncated = errors.New("truncated")

// MaxMultipartBytes bounds a reassembled multipart reply.
const MaxMultipartBytes = 16 << 20

// Multipart is the header of a multipart reply message body.
type Multipart struct {
	Type  uint16
	Flags uint16
	Body  []byte // aliases the input
}

// ParseMultipart splits a multipart reply message body (the bytes after the
// OpenFlow header) into its header and payload.
func ParseMultipart(b []byte) (Multipart, error) {
	if len(b) < 8 {
		return Multipart{}, fmt.Errorf("multipart reply header: %d bytes, want at least 8: %w", len(b), ErrTruncated)
	}
	return Multipart{Type: be16(b), Flags: be16(b[2:]), Body: b[8:]}, nil
}

// Features is the part of the features reply the controller uses.
type Features struct {
	DatapathID uint64
	NumTables  uint8
	AuxID      uint8
}

// ParseFeatures decodes a features reply body.
func ParseFeatures(b []byte) (Features, error) {
	if len(b) < 24 {
		return Features{}, fmt.Errorf("features reply: %d bytes, want 24: %w", len(b), ErrTruncated)
	}
	return Features{DatapathID: be64(b), NumTables: b[12], AuxID: b[13]}, nil
}

// ErrorMsg is a decoded OFPT_ERROR message.
type ErrorMsg struct {
	Type, Code uint16
	Data       []byte // usually the start of the offending request
}

// ParseError decodes an error message body.
func ParseError(b []byte) (ErrorMsg, error) {
	if len(b) < 4 {
		return ErrorMsg{}, fmt.Errorf("error message: %d bytes, want at least 4: %w", len(b), ErrTruncated)
	}
	return ErrorMsg{Type: be16(b), Code: be16(b[2:]), Data: b[4:]}, nil
}

var errTypeNames = [...]string{
	0: "hello failed", 1: "bad request", 2: "bad action", 3: "bad instruction",
	4: "bad match", 5: "flow-mod failed", 6: "group-mod failed", 7: "port-mod failed",
	8: "table-mod failed", 9: "queue op failed", 10: "switch config failed",
	11: "role request failed", 12: "meter-mod failed", 13: "table features failed",
}

// NumErrorTypes is the number of OpenFlow 1.3 error types below the
// experimenter type: 0 to NumErrorTypes-1.
const NumErrorTypes = len(errTypeNames)

// ErrTypeExperimenter is the OpenFlow 1.3 experimenter error type.
const ErrTypeExperimenter = 0xffff

// Error formats the message like "flow-mod failed (type 5, code 1)".
func (e ErrorMsg) Error() string {
	name := "error"
	if int(e.Type) < len(errTypeNames) {
		name = errTypeNames[e.Type]
	}
	return fmt.Sprintf("%s (type %d, code %d)", name, e.Type, e.Code)
}

// PortStats is one ofp_port_stats entry.
type PortStats struct {
	PortNo                                   uint32
	RxPackets, TxPackets, RxBytes, TxBytes   uint64
	RxDropped, TxDropped, RxErrors, TxErrors uint64
	DurationSec, DurationNSec                uint32
}

const portStatsLen = 112

// ParsePortStats decodes a port statistics multipart payload, appending to dst.
func ParsePortStats(dst []PortStats, b []byte) ([]PortStats, error) {
	if len(b)%portStatsLen != 0 {
		return dst, fmt.Errorf("port stats: %d bytes, want a multiple of %d: %w", len(b), portStatsLen, ErrTruncated)
	}
	for off := 0; off < len(b); off += portStatsLen {
		p := b[off : off+portStatsLen]
		dst = append(dst, PortStats{
			PortNo:    be32(p),
			RxPackets: be64(p[8:]), TxPackets: be64(p[16:]),
			RxBytes: be64(p[24:]), TxBytes: be64(p[32:]),
			RxDropped: be64(p[40:]), TxDropped: be64(p[48:]),
			RxErrors: be64(p[56:]), TxErrors: be64(p[64:]),
			DurationSec: be32(p[104:]), DurationNSec: be32(p[108:]),
		})
	}
	return dst, nil
}

// Match fields a Match can carry (bits of Match.Has).
const (
	HasInPort uint32 = 1 << iota
	HasEthType
	HasIPProto
	HasIPSrc
	HasIPDst
	HasL4Src
	HasL4Dst
	HasARPTPA
	HasOther // a field this package does not decode
)

// Match is the subset of an OXM match the controller writes and reads back.
type Match struct {
	Has     uint32
	InPort  uint32
	EthType uint16
	IPProto uint8
	IPSrc   netip.Addr // IPv4 or IPv6 source
	IPDst   netip.Addr
	L4Src   uint16 // TCP or UDP source port
	L4Dst   uint16
	ARPTPA  netip.Addr
}

// OXM field numbers of class OFPXMC_OPENFLOW_BASIC.
const (
	oxmInPort  = 0
	oxmEthType = 5
	oxmIPProto = 10
	oxmIPv4Src = 11
	oxmIPv4Dst = 12
	oxmTCPSrc  = 13
	oxmTCPDst  = 14
	oxmUDPSrc  = 15
	oxmUDPDst  = 16
	oxmARPTPA  = 23
	oxmIPv6Src = 26
	oxmIPv6Dst = 27

	oxmClassBasic = 0x8000
)

// parseMatch decodes an ofp_match at b and returns it with the number of
// bytes it occupies (its length rounded up to 8).
func parseMatch(b []byte) (Match, int, error) {
	var m Match
	if len(b) < 4 {
		return m, 0, fmt.Errorf("match header: %d bytes, want 4: %w", len(b), ErrTruncated)
	}
	typ, length := be16(b), int(be16(b[2:]))
	if typ != 1 {
		return m, 0, fmt.Errorf("match type %d, want 1 (OXM)", typ)
	}
	if length < 4 {
		return m, 0, fmt.Errorf("match length %d, want at least 4", length)
	}
	padded := (length + 7) &^ 7
	if padded > len(b) {
		return m, 0, fmt.Errorf("match length %d (padded %d) exceeds the %d bytes left: %w", length, padded, len(b), ErrTruncated)
	}
	oxm := b[4:length]
	for len(oxm) > 0 {
		if len(oxm) < 4 {
			return m, 0, fmt.Errorf("oxm header: %d bytes, want 4: %w", len(oxm), ErrTruncated)
		}
		class, field, hasMask, n := be16(oxm), oxm[2]>>1, oxm[2]&1 == 1, int(oxm[3])
		if 4+n > len(oxm) {
			return m, 0, fmt.Errorf("oxm field %d: length %d exceeds the %d bytes left: %w", field, n, len(oxm)-4, ErrTruncated)
		}
		v := oxm[4 : 4+n]
		oxm = oxm[4+n:]
		if class != oxmClassBasic || hasMask {
			m.Has |= HasOther
			continue
		}
		if err := m.setField(field, v); err != nil {
			return m, 0, err
		}
	}
	return m, padded, nil
}

func (m *Match) setField(field uint8, v []byte) error {
	want := oxmLen(field)
	if want == 0 {
		m.Has |= HasOther
		return nil
	}
	if len(v) != want {
		return fmt.Errorf("oxm field %d: %d value bytes, want %d", field, len(v), want)
	}
	switch field {
	case oxmInPort:
		m.Has, m.InPort = m.Has|HasInPort, be32(v)
	case oxmEthType:
		m.Has, m.EthType = m.Has|HasEthType, be16(v)
	case oxmIPProto:
		m.Has, m.IPProto = m.Has|HasIPProto, v[0]
	case oxmIPv4Src, oxmIPv6Src:
		a, _ := netip.AddrFromSlice(v)
		m.Has, m.IPSrc = m.Has|HasIPSrc, a
	case oxmIPv4Dst, oxmIPv6Dst:
		a, _ := netip.AddrFromSlice(v)
		m.Has, m.IPDst = m.Has|HasIPDst, a
	case oxmTCPSrc, oxmUDPSrc:
		m.Has, m.L4Src = m.Has|HasL4Src, be16(v)
	case oxmTCPDst, oxmUDPDst:
		m.Has, m.L4Dst = m.Has|HasL4Dst, be16(v)
	case oxmARPTPA:
		a, _ := netip.AddrFromSlice(v)
		m.Has, m.ARPTPA = m.Has|HasARPTPA, a
	}
	return nil
}

// FlowStats is one ofp_flow_stats entry.
type FlowStats struct {
	Table                     uint8
	DurationSec, DurationNSec uint32
	Priority                  uint16
	IdleTimeout, HardTimeout  uint16
	Flags                     uint16
	Cookie                    uint64
	Packets, Bytes            uint64
	Match                     Match
	// OutPort is the port of the first output action of an apply-actions
	// instruction, or 0 when there is none.
	OutPort uint32
}

const flowStatsFixed = 48

// ParseFlowStats decodes a flow statistics multipart payload, appending to dst.
func ParseFlowStats(dst []FlowStats, b []byte) ([]FlowStats, error) {
	for off := 0; off < len(b); {
		rest := b[off:]
		if len(rest) < flowStatsFixed {
			return dst, fmt.Errorf("flow stats at offset %d: %d bytes, want at least %d: %w", off, len(rest), flowStatsFixed, ErrTruncated)
		}
		n := int(be16(rest))
		if n < flowStatsFixed+8 || n > len(rest) {
			return dst, fmt.Errorf("flow stats at offset %d: length %d, want %d..%d", off, n, flowStatsFixed+8, len(rest))
		}
		e := rest[:n]
		fs := FlowStats{
			Table: e[2], DurationSec: be32(e[4:]), DurationNSec: be32(e[8:]),
			Priority: be16(e[12:]), IdleTimeout: be16(e[14:]), HardTimeout: be16(e[16:]),
			Flags: be16(e[18:]), Cookie: be64(e[24:]), Packets: be64(e[32:]), Bytes: be64(e[40:]),
		}
		m, ml, err := parseMatch(e[flowStatsFixed:])
		if err != nil {
			return dst, fmt.Errorf("flow stats at offset %d (cookie %#x): %w", off, fs.Cookie, err)
		}
		fs.Match = m
		if fs.OutPort, err = firstOutput(e[flowStatsFixed+ml:]); err != nil {
			return dst, fmt.Errorf("flow stats at offset %d (cookie %#x): %w", off, fs.Cookie, err)
		}
		dst = append(dst, fs)
		off += n
	}
	return dst, nil
}

// firstOutput walks instructions and returns the first output port of an
// apply-actions or write-actions instruction.
func firstOutput(b []byte) (uint32, error) {
	for len(b) > 0 {
		if len(b) < 4 {
			return 0, fmt.Errorf("instruction header: %d bytes, want 4: %w", len(b), ErrTruncated)
		}
		typ, n := be16(b), int(be16(b[2:]))
		if n < 4 || n > len(b) {
			return 0, fmt.Errorf("instruction type %d: length %d, want 4..%d", typ, n, len(b))
		}
		if (typ == 3 || typ == 4) && n >= 8 { // write-actions, apply-actions
			acts := b[8:n]
			for len(acts) > 0 {
				if len(acts) < 4 {
					return 0, fmt.Errorf("action header: %d bytes, want 4: %w", len(acts), ErrTruncated)
				}
				at, an := be16(acts), int(be16(acts[2:]))
				if an < 4 || an > len(acts) {
					return 0, fmt.Errorf("action type %d: length %d, want 4..%d", at, an, len(acts))
				}
				if at == 0 {
					if an < 8 {
						return 0, fmt.Errorf("output action: length %d, want 16", an)
					}
					return be32(acts[4:]), nil
				}
				acts = acts[an:]
			}
		}
		b = b[n:]
	}
	return 0, nil
}

// oxmLen returns the value length of a basic OXM field this package
// decodes, or 0 for the others.
func oxmLen(field uint8) int {
	switch field {
	case oxmIPProto:
		return 1
	case oxmEthType, oxmTCPSrc, oxmTCPDst, oxmUDPSrc, oxmUDPDst:
		return 2
	case oxmInPort, oxmIPv4Src, oxmIPv4Dst, oxmARPTPA:
		return 4
	case oxmIPv6Src, oxmIPv6Dst:
		return 16
	}
	return 0
}

func be16(b []byte) uint16 { return binary.BigEndian.Uint16(b) }
func be32(b []byte) uint32 { return binary.BigEndian.Uint32(b) }
func be64(b []byte) uint64 { return binary.BigEndian.Uint64(b) }
