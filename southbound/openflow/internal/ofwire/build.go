package ofwire

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	of "github.com/netrack/openflow"
	"github.com/netrack/openflow/ofp"
)

// Message types, re-exported so callers need not import the library.
const (
	TypeHello           = of.TypeHello
	TypeError           = of.TypeError
	TypeEchoRequest     = of.TypeEchoRequest
	TypeEchoReply       = of.TypeEchoReply
	TypeFeaturesRequest = of.TypeFeaturesRequest
	TypeFeaturesReply   = of.TypeFeaturesReply
	TypeFlowMod         = of.TypeFlowMod
	TypeMultipartReq    = of.TypeMultipartRequest
	TypeMultipartReply  = of.TypeMultipartReply
	TypeBarrierRequest  = of.TypeBarrierRequest
	TypeBarrierReply    = of.TypeBarrierReply
	TypePacketIn        = of.TypePacketIn
	TypePortStatus      = of.TypePortStatus
	TypeFlowRemoved     = of.TypeFlowRemoved
)

// FlowModCommand is a flow-mod command.
type FlowModCommand = ofp.FlowModCommand

// Flow-mod commands.
const (
	FlowAdd          = ofp.FlowAdd
	FlowDelete       = ofp.FlowDelete
	FlowDeleteStrict = ofp.FlowDeleteStrict
)

// Special port numbers.
const (
	PortAny uint32 = 0xffffffff
)

// Body is a pre-encoded message body.
type Body []byte

// WriteTo implements io.WriterTo.
func (b Body) WriteTo(w io.Writer) (int64, error) {
	n, err := w.Write(b)
	return int64(n), err
}

// NewMessage returns an OpenFlow 1.3 message of type t with transaction id
// xid and the given body (nil for none).
func NewMessage(t of.Type, xid uint32, body io.WriterTo) *of.Request {
	r := of.NewRequest(t, body)
	r.Header.Transaction = xid
	return r
}

// Hello returns a hello message announcing OpenFlow 1.3 only (version
// bitmap element with bit 4 set).
func Hello(xid uint32) *of.Request {
	return NewMessage(of.TypeHello, xid, Body{0, 1, 0, 8, 0, 0, 0, 1 << Version})
}

// Echo returns an echo request (reply=false) or reply carrying data.
func Echo(xid uint32, reply bool, data []byte) *of.Request {
	t := of.TypeEchoRequest
	if reply {
		t = of.TypeEchoReply
	}
	return NewMessage(t, xid, Body(data))
}

// PortStatsRequest returns a multipart request for the statistics of every port.
func PortStatsRequest(xid uint32) *of.Request {
	return NewMessage(of.TypeMultipartRequest, xid,
		ofp.NewMultipartRequest(ofp.MultipartTypePortStats, &ofp.PortStatsRequest{PortNo: ofp.PortAny}))
}

// FlowStatsRequest returns a multipart request for the flows of every table
// whose cookie matches cookie under mask.
func FlowStatsRequest(xid uint32, cookie, mask uint64) *of.Request {
	return NewMessage(of.TypeMultipartRequest, xid,
		ofp.NewMultipartRequest(ofp.MultipartTypeFlow, &ofp.FlowStatsRequest{
			Table: ofp.TableAll, OutPort: ofp.PortAny, OutGroup: ofp.GroupAny,
			Cookie: cookie, CookieMask: mask, Match: ofp.Match{Type: ofp.MatchTypeXM},
		}))
}

// FlowStatsRequestMatch returns a multipart request for the flows of every
// table whose cookie matches cookie under mask and whose match is m or more
// specific (OpenFlow's non-strict match).
func FlowStatsRequestMatch(xid uint32, cookie, mask uint64, m Match) (*of.Request, error) {
	om, err := m.oxm()
	if err != nil {
		return nil, fmt.Errorf("flow stats request: %w", err)
	}
	return NewMessage(of.TypeMultipartRequest, xid,
		ofp.NewMultipartRequest(ofp.MultipartTypeFlow, &ofp.FlowStatsRequest{
			Table: ofp.TableAll, OutPort: ofp.PortAny, OutGroup: ofp.GroupAny,
			Cookie: cookie, CookieMask: mask, Match: om,
		})), nil
}

// FlowMod describes one flow-mod the controller sends.
type FlowMod struct {
	Command     ofp.FlowModCommand
	Cookie      uint64
	CookieMask  uint64 // for deletes
	Priority    uint16
	HardTimeout uint16 // seconds, 0 = permanent
	Match       Match
	OutPort     uint32 // output action; 0 = no instruction (deletes)
}

// Encode returns the flow-mod as a message with transaction id xid.
func (f FlowMod) Encode(xid uint32) (*of.Request, error) {
	m, err := f.Match.oxm()
	if err != nil {
		return nil, err
	}
	fm := &ofp.FlowMod{
		Cookie: f.Cookie, CookieMask: f.CookieMask, Table: 0, Command: f.Command,
		HardTimeout: f.HardTimeout, Priority: f.Priority, Buffer: ofp.NoBuffer,
		OutPort: ofp.PortAny, OutGroup: ofp.GroupAny, Match: m,
	}
	if f.Command == ofp.FlowDelete || f.Command == ofp.FlowDeleteStrict {
		fm.Table = ofp.TableAll
	}
	if f.OutPort != 0 {
		fm.Instructions = ofp.Instructions{&ofp.InstructionApplyActions{
			Actions: ofp.Actions{&ofp.ActionOutput{Port: ofp.PortNo(f.OutPort), MaxLen: ofp.ContentLenNoBuffer}},
		}}
	}
	var buf bytes.Buffer
	if _, err := fm.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("encode flow-mod: %w", err)
	}
	return NewMessage(of.TypeFlowMod, xid, Body(buf.Bytes())), nil
}

// oxm converts m into the library's OXM match. IP and L4 fields need their
// prerequisites (eth_type, ip_proto), which the caller sets.
func (m Match) oxm() (ofp.Match, error) {
	out := ofp.Match{Type: ofp.MatchTypeXM}
	add := func(t ofp.XMType, v []byte) {
		out.Fields = append(out.Fields, ofp.XM{Class: ofp.XMClassOpenflowBasic, Type: t, Value: ofp.XMValue(v)})
	}
	if m.Has&HasInPort != 0 {
		add(ofp.XMTypeInPort, binary.BigEndian.AppendUint32(nil, m.InPort))
	}
	if m.Has&HasEthType != 0 {
		add(ofp.XMTypeEthType, binary.BigEndian.AppendUint16(nil, m.EthType))
	}
	if m.Has&HasIPProto != 0 {
		add(ofp.XMTypeIPProto, []byte{m.IPProto})
	}
	addr := func(has uint32, a interface {
		Is4() bool
		AsSlice() []byte
	}, v4, v6 ofp.XMType, name string) error {
		if m.Has&has == 0 {
			return nil
		}
		b := a.AsSlice()
		switch len(b) {
		case 4:
			add(v4, b)
		case 16:
			add(v6, b)
		default:
			return fmt.Errorf("match %s: invalid address", name)
		}
		return nil
	}
	if err := addr(HasIPSrc, m.IPSrc, ofp.XMTypeIPv4Src, ofp.XMTypeIPv6Src, "ip source"); err != nil {
		return out, err
	}
	if err := addr(HasIPDst, m.IPDst, ofp.XMTypeIPv4Dst, ofp.XMTypeIPv6Dst, "ip destination"); err != nil {
		return out, err
	}
	l4src, l4dst := ofp.XMTypeTCPSrc, ofp.XMTypeTCPDst
	if m.IPProto == 17 {
		l4src, l4dst = ofp.XMTypeUDPSrc, ofp.XMTypeUDPDst
	}
	if m.Has&(HasL4Src|HasL4Dst) != 0 && (m.Has&HasIPProto == 0 || (m.IPProto != 6 && m.IPProto != 17)) {
		return out, fmt.Errorf("match sets transport ports with ip_proto %d, want 6 or 17", m.IPProto)
	}
	if m.Has&HasL4Src != 0 {
		add(l4src, binary.BigEndian.AppendUint16(nil, m.L4Src))
	}
	if m.Has&HasL4Dst != 0 {
		add(l4dst, binary.BigEndian.AppendUint16(nil, m.L4Dst))
	}
	if m.Has&HasARPTPA != 0 {
		if !m.ARPTPA.Is4() {
			return out, fmt.Errorf("match arp_tpa %v, want an IPv4 address", m.ARPTPA)
		}
		add(ofp.XMTypeARPTPA, m.ARPTPA.AsSlice())
	}
	return out, nil
}

// Bytes encodes a message into its wire form (header included).
func Bytes(r *of.Request) ([]byte, error) {
	var buf bytes.Buffer
	if _, err := r.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
