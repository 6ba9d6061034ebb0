package hostagent

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"syscall"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/proflow-sdn/proflow"
)

// inet_diag attribute and extension numbers (linux/inet_diag.h).
const (
	inetDiagInfo = 2 // INET_DIAG_INFO: struct tcp_info
	inetDiagCong = 4 // INET_DIAG_CONG: the congestion control's name
	// sizeofInetDiagMsg is struct inet_diag_msg; its attributes follow.
	sizeofInetDiagMsg = 72
	// sizeofInetDiagReqV2 is struct inet_diag_req_v2.
	sizeofInetDiagReqV2 = 56
	// infiniteSsthresh is TCP_INFINITE_SSTHRESH: no loss seen yet.
	infiniteSsthresh = 0x7fffffff
)

// tcpStates names the kernel's TCP states (include/net/tcp_states.h).
var tcpStates = [...]string{1: "established", 2: "syn_sent", 3: "syn_recv", 4: "fin_wait1", 5: "fin_wait2",
	6: "time_wait", 7: "close", 8: "close_wait", 9: "last_ack", 10: "listen", 11: "closing", 12: "new_syn_recv"}

// caStates names the sender's congestion avoidance states (enum
// tcp_ca_state of include/uapi/linux/tcp.h).
var caStates = [...]string{"open", "disorder", "cwr", "recovery", "loss"}

// caStateName names congestion avoidance state s.
func caStateName(s uint8) string {
	if int(s) < len(caStates) {
		return caStates[s]
	}
	return fmt.Sprintf("ca_state%d", s)
}

// stateName names TCP state s.
func stateName(s uint8) string {
	if int(s) < len(tcpStates) && tcpStates[s] != "" {
		return tcpStates[s]
	}
	return fmt.Sprintf("state%d", s)
}

// netlinkReader reads TCP_INFO over inet_diag (NETLINK_SOCK_DIAG), the
// interface ss uses, on sockets opened once in the network namespace it
// was made for. It is not safe for concurrent use: one agent's poll loop
// owns it.
type netlinkReader struct {
	h *netlink.Handle
	// one carries the exact-socket requests: INET_DIAG_INFO for
	// tcpi_delivery_rate_app_limited, INET_DIAG_CONG for the name.
	one   *nl.NetlinkSocket
	where string
	// cc caches the congestion control per socket (its cookie): asked
	// once per connection, not at every poll.
	ccCookie [2]uint32
	cc       string
}

// newNetlinkReader opens the inet_diag sockets in the namespace at nsPath
// (the caller's own when empty).
func newNetlinkReader(nsPath string) (*netlinkReader, error) {
	ns, cur := netns.None(), netns.None()
	where := "this network namespace"
	if nsPath != "" {
		var err error
		if ns, err = netns.GetFromPath(nsPath); err != nil {
			return nil, fmt.Errorf("network namespace %s: %w", nsPath, err)
		}
		defer ns.Close()
		if cur, err = netns.Get(); err != nil {
			return nil, fmt.Errorf("this thread's network namespace: %w", err)
		}
		defer cur.Close()
		where = "network namespace " + nsPath
	}
	h, err := netlink.NewHandleAt(ns, unix.NETLINK_INET_DIAG)
	if err != nil {
		return nil, fmt.Errorf("inet_diag socket in %s: %w", where, err)
	}
	s, err := nl.GetNetlinkSocketAt(ns, cur, unix.NETLINK_INET_DIAG)
	if err != nil {
		h.Close()
		return nil, fmt.Errorf("inet_diag socket in %s: %w", where, err)
	}
	return &netlinkReader{h: h, one: s, where: where}, nil
}

func (r *netlinkReader) Close() error {
	r.h.Close()
	r.one.Close()
	return nil
}

// read returns the TCP_INFO of flow's sending socket: the first socket
// whose local end is Src:SrcPort and remote end Dst:DstPort (a zero port
// matching any), preferring an established one. An IPv4 flow's socket is
// looked for among the AF_INET sockets, then, when none matches, among the
// AF_INET6 ones: a dual-stack socket on v4-mapped addresses (::ffff:a.b.c.d,
// Java's default) is one of those.
func (r *netlinkReader) read(ctx context.Context, flow proflow.FlowID, timeout time.Duration) (TCPInfo, error) {
	if dl, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(dl))
	}
	if timeout < time.Millisecond {
		return TCPInfo{}, fmt.Errorf("inet_diag read: %w", context.DeadlineExceeded)
	}
	if err := r.h.SetSocketTimeout(timeout); err != nil {
		return TCPInfo{}, fmt.Errorf("inet_diag socket timeout %v: %w", timeout, err)
	}
	families := []uint8{unix.AF_INET, unix.AF_INET6}
	if flow.Src.Is6() && !flow.Src.Is4In6() {
		families = families[1:]
	}
	var best *netlink.InetDiagTCPInfoResp
	for _, family := range families {
		s, err := r.find(family, flow)
		if err != nil {
			return TCPInfo{}, err
		}
		if best = s; best != nil {
			break
		}
	}
	if best == nil {
		return TCPInfo{}, fmt.Errorf("%v in %s: %w", flow, r.where, ErrNoSocket)
	}
	info := fromKernel(best.TCPInfo)
	// The library decodes tcpi_delivery_rate_app_limited from the wrong
	// bit; ask the socket (its own family) again for the raw tcp_info, and
	// for the congestion control's name when this connection has none yet.
	family, id := best.InetDiagMsg.Family, best.InetDiagMsg.ID
	askCong := r.cc == "" || id.Cookie != r.ccCookie
	ext := uint8(1 << (inetDiagInfo - 1))
	if askCong {
		ext |= 1 << (inetDiagCong - 1)
	}
	attrs, err := r.exact(diagRequest{family: family, ext: ext, id: id}, timeout)
	switch {
	case errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ESTALE):
		// Closed since the dump (ESTALE: its 4-tuple is another socket's now).
		return TCPInfo{}, fmt.Errorf("%v in %s: %w", flow, r.where, ErrNoSocket)
	case err != nil:
		return TCPInfo{}, fmt.Errorf("inet_diag tcp_info of %v in %s: %w", flow, r.where, err)
	}
	if info.DeliveryRateAppLimited, err = appLimitedAttr(attrs); err != nil {
		return TCPInfo{}, fmt.Errorf("inet_diag tcp_info of %v in %s: %w", flow, r.where, err)
	}
	if askCong {
		// Best effort: TCP_INFO is the report; a socket without a name is
		// asked again at the next poll.
		if cc, err := congName(attrs); err == nil {
			r.cc, r.ccCookie = cc, id.Cookie
		}
	}
	if id.Cookie == r.ccCookie {
		info.CongestionControl = r.cc
	}
	return info, nil
}

// find dumps the TCP sockets of family and returns flow's among them,
// preferring an established one, or nil when none matches.
func (r *netlinkReader) find(family uint8, flow proflow.FlowID) (*netlink.InetDiagTCPInfoResp, error) {
	var socks []*netlink.InetDiagTCPInfoResp
	var err error
	for range 3 { // a dump interrupted by a concurrent change is retried
		if socks, err = r.h.SocketDiagTCPInfo(family); !errors.Is(err, netlink.ErrDumpInterrupted) {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("inet_diag dump of %s TCP sockets in %s: %w", familyName(family), r.where, err)
	}
	var best *netlink.InetDiagTCPInfoResp
	for _, s := range socks {
		if s.InetDiagMsg == nil || s.TCPInfo == nil || !matches(s.InetDiagMsg.ID, flow) {
			continue
		}
		if best == nil || (best.InetDiagMsg.State != netlink.TCP_ESTABLISHED && s.InetDiagMsg.State == netlink.TCP_ESTABLISHED) {
			best = s
		}
	}
	return best, nil
}

// familyName names address family f for errors.
func familyName(f uint8) string {
	switch f {
	case unix.AF_INET:
		return "AF_INET"
	case unix.AF_INET6:
		return "AF_INET6"
	}
	return fmt.Sprintf("family %d", f)
}

// matches reports whether the socket id is flow's sender: local Src and
// SrcPort, remote Dst and DstPort, zero ports matching any.
func matches(id netlink.SocketID, flow proflow.FlowID) bool {
	src, ok1 := netip.AddrFromSlice(id.Source)
	dst, ok2 := netip.AddrFromSlice(id.Destination)
	if !ok1 || !ok2 || src.Unmap() != flow.Src.Unmap() || dst.Unmap() != flow.Dst.Unmap() {
		return false
	}
	return (flow.SrcPort == 0 || id.SourcePort == flow.SrcPort) && (flow.DstPort == 0 || id.DestinationPort == flow.DstPort)
}

// fromKernel converts the library's struct tcp_info, all but
// DeliveryRateAppLimited, which the library decodes from the wrong bit
// (see appLimited).
func fromKernel(t *netlink.TCPInfo) TCPInfo {
	us := func(v uint32) float64 { return float64(v) / 1e6 }
	ss := t.Snd_ssthresh
	if ss >= infiniteSsthresh {
		ss = 0
	}
	return TCPInfo{
		State: stateName(t.State), SRTT: us(t.Rtt), RTTVar: us(t.Rttvar), MinRTT: us(t.Min_rtt), RTO: us(t.Rto),
		Retransmits: uint32(t.Retransmits), TotalRetrans: t.Total_retrans, Backoff: uint32(t.Backoff), CAState: caStateName(t.Ca_state), Lost: t.Lost, Unacked: t.Unacked,
		DeliveryRate: float64(t.Delivery_rate), PacingRate: float64(t.Pacing_rate),
		CwndSegments: t.Snd_cwnd, SsthreshSegments: ss, SndMSS: t.Snd_mss,
		SndWndBytes: t.Snd_wnd, RcvSpaceBytes: t.Rcv_space, BytesAcked: t.Bytes_acked, BytesRetrans: t.Bytes_retrans,
	}
}

// diagRequest is struct inet_diag_req_v2 asking for one socket by its id
// (cookie included) with the extensions in ext.
type diagRequest struct {
	family, ext uint8
	id          netlink.SocketID
}

func (q diagRequest) Len() int { return sizeofInetDiagReqV2 }

func (q diagRequest) Serialize() []byte {
	b := make([]byte, sizeofInetDiagReqV2)
	b[0], b[1], b[2] = q.family, unix.IPPROTO_TCP, q.ext
	binary.NativeEndian.PutUint32(b[4:], 0xfff) // every state
	binary.BigEndian.PutUint16(b[8:], q.id.SourcePort)
	binary.BigEndian.PutUint16(b[10:], q.id.DestinationPort)
	src, dst := q.id.Source, q.id.Destination
	if q.family == unix.AF_INET {
		src, dst = src.To4(), dst.To4()
	}
	copy(b[12:28], src)
	copy(b[28:44], dst)
	binary.NativeEndian.PutUint32(b[44:], q.id.Interface)
	binary.NativeEndian.PutUint32(b[48:], q.id.Cookie[0])
	binary.NativeEndian.PutUint32(b[52:], q.id.Cookie[1])
	return b
}

// exact asks the kernel for the one socket of q (its id, cookie included)
// and returns the attributes of the answer: the extensions q.ext asked for.
func (r *netlinkReader) exact(q diagRequest, timeout time.Duration) ([]syscall.NetlinkRouteAttr, error) {
	tv := unix.NsecToTimeval(timeout.Nanoseconds())
	if err := r.one.SetReceiveTimeout(&tv); err != nil {
		return nil, fmt.Errorf("inet_diag socket timeout %v: %w", timeout, err)
	}
	req := nl.NewNetlinkRequest(nl.SOCK_DIAG_BY_FAMILY, 0)
	req.AddData(q)
	if err := r.one.Send(req); err != nil {
		return nil, fmt.Errorf("inet_diag request: %w", err)
	}
	for {
		msgs, _, err := r.one.Receive()
		if err != nil {
			return nil, fmt.Errorf("inet_diag answer: %w", err)
		}
		for _, m := range msgs {
			if m.Header.Seq != req.Seq {
				continue
			}
			switch m.Header.Type {
			case unix.NLMSG_ERROR:
				if len(m.Data) >= 4 {
					if errno := int32(binary.NativeEndian.Uint32(m.Data)); errno != 0 {
						return nil, fmt.Errorf("inet_diag answer: %w", syscall.Errno(-errno))
					}
				}
				return nil, errors.New("inet_diag answer: an acknowledgement, want the socket")
			case nl.SOCK_DIAG_BY_FAMILY:
				return parseDiag(m.Data)
			}
		}
	}
}

// parseDiag returns the attributes of an inet_diag message (struct
// inet_diag_msg and its attributes).
func parseDiag(msg []byte) ([]syscall.NetlinkRouteAttr, error) {
	if len(msg) < sizeofInetDiagMsg {
		return nil, fmt.Errorf("inet_diag message of %d bytes, want at least %d", len(msg), sizeofInetDiagMsg)
	}
	attrs, err := nl.ParseRouteAttr(msg[sizeofInetDiagMsg:])
	if err != nil {
		return nil, fmt.Errorf("inet_diag attributes: %w", err)
	}
	return attrs, nil
}

// bigEndian says this machine stores the high byte of a word first.
var bigEndian = binary.NativeEndian.Uint16([]byte{0, 1}) == 1

// appLimited decodes tcpi_delivery_rate_app_limited from byte 7 of struct
// tcp_info, which holds the bit-fields
//
//	__u8 tcpi_delivery_rate_app_limited:1, tcpi_fastopen_client_fail:2;
//
// The first bit-field of a byte is its lowest bit on a little-endian
// machine and its highest on a big-endian one (the ABI's rule GCC
// follows); vishvananda/netlink reads the highest bit everywhere.
func appLimited(b7 byte) bool {
	if bigEndian {
		return b7&0x80 != 0
	}
	return b7&1 != 0
}

// appLimitedAttr returns tcpi_delivery_rate_app_limited from the
// INET_DIAG_INFO attribute (struct tcp_info) among attrs.
func appLimitedAttr(attrs []syscall.NetlinkRouteAttr) (bool, error) {
	for _, a := range attrs {
		if a.Attr.Type == inetDiagInfo {
			if len(a.Value) < 8 {
				return false, fmt.Errorf("inet_diag: tcp_info of %d bytes, want at least 8", len(a.Value))
			}
			return appLimited(a.Value[7]), nil
		}
	}
	return false, errors.New("inet_diag: no INET_DIAG_INFO attribute in the answer, want the socket's tcp_info")
}

// congName returns the congestion control's name from the INET_DIAG_CONG
// attribute among attrs.
func congName(attrs []syscall.NetlinkRouteAttr) (string, error) {
	for _, a := range attrs {
		if a.Attr.Type == inetDiagCong {
			name, _, _ := bytes.Cut(a.Value, []byte{0})
			if len(name) == 0 {
				return "", errors.New("inet_diag: empty congestion control name")
			}
			return string(name), nil
		}
	}
	return "", errors.New("inet_diag: no INET_DIAG_CONG attribute in the answer")
}
