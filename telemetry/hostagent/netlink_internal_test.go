package hostagent

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"net/netip"
	"testing"
	"time"
	"unsafe"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/proflow-sdn/proflow"
)

// fromKernel names the congestion avoidance state and carries the
// backoff (tcpi_ca_state, tcpi_backoff) as the kernel reports them.
func TestFromKernelLossState(t *testing.T) {
	for _, tc := range []struct {
		ca      uint8
		backoff uint8
		want    string
	}{{0, 0, "open"}, {1, 0, "disorder"}, {2, 0, "cwr"}, {3, 0, "recovery"}, {4, 3, "loss"}, {9, 0, "ca_state9"}} {
		got := fromKernel(&netlink.TCPInfo{Ca_state: tc.ca, Backoff: tc.backoff, Retransmits: tc.backoff})
		if got.CAState != tc.want || got.Backoff != uint32(tc.backoff) || got.Retransmits != uint32(tc.backoff) {
			t.Errorf("ca_state %d backoff %d: CAState %q Backoff %d Retransmits %d, want %q, %d, %d",
				tc.ca, tc.backoff, got.CAState, got.Backoff, got.Retransmits, tc.want, tc.backoff, tc.backoff)
		}
	}
}

// appLimited reads tcpi_delivery_rate_app_limited from the first
// bit-field of tcp_info's byte 7, not from tcpi_fastopen_client_fail
// beside it nor from the byte's other end.
func TestAppLimitedBit(t *testing.T) {
	first, fastopen, other := byte(1), byte(0x06), byte(0x80)
	if binary.NativeEndian.Uint16([]byte{0, 1}) == 1 {
		first, fastopen, other = 0x80, 0x60, 1
	}
	for _, tc := range []struct {
		b7   byte
		want bool
	}{{0, false}, {first, true}, {other, false}, {first | other, true}, {fastopen, false}, {first | fastopen, true}} {
		if got := appLimited(tc.b7); got != tc.want {
			t.Errorf("byte 7 %08b: app-limited %v, want %v", tc.b7, got, tc.want)
		}
	}
}

// loopbackFlow returns the flow of the socket from local to remote, and
// accepts its peer on ln and drains it until the sender closes.
func loopbackFlow(ln net.Listener, local, remote netip.AddrPort) proflow.FlowID {
	go func() {
		s, err := ln.Accept()
		if err != nil {
			return
		}
		defer s.Close()
		_, _ = io.Copy(io.Discard, s)
	}()
	return proflow.FlowID{Src: local.Addr().Unmap(), Dst: remote.Addr().Unmap(), SrcPort: local.Port(), DstPort: remote.Port(), Proto: proflow.ProtoTCP}
}

// tcpInfoByte7 returns byte 7 of the socket's struct tcp_info as
// getsockopt(TCP_INFO) gives it: tcpi_delivery_rate_app_limited:1 and
// tcpi_fastopen_client_fail:2.
func tcpInfoByte7(t *testing.T, fd int) byte {
	t.Helper()
	ti, err := unix.GetsockoptTCPInfo(fd, unix.IPPROTO_TCP, unix.TCP_INFO)
	if err != nil {
		t.Fatalf("getsockopt(TCP_INFO): %v", err)
	}
	return (*[unix.SizeofTCPInfo]byte)(unsafe.Pointer(ti))[7]
}

// An application-limited sender (small writes with pauses on loopback)
// has tcpi_delivery_rate_app_limited set, and the reader says so as
// getsockopt(TCP_INFO) on the same socket does.
func TestNetlinkAppLimited(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp4", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	flow := loopbackFlow(ln, c.LocalAddr().(*net.TCPAddr).AddrPort(), c.RemoteAddr().(*net.TCPAddr).AddrPort())
	r, err := newNetlinkReader("")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for range 10 {
		if _, err := c.Write([]byte("tiny")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	rc, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var b7 byte
	if err := rc.Control(func(fd uintptr) { b7 = tcpInfoByte7(t, int(fd)) }); err != nil {
		t.Fatal(err)
	}
	info, err := r.read(context.Background(), flow, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	bit := byte(1) // the first bit-field of a byte is its lowest bit...
	if binary.NativeEndian.Uint16([]byte{0, 1}) == 1 {
		bit = 0x80 // ...on little-endian machines, its highest on big-endian ones
	}
	if want := b7&bit != 0; !want || info.DeliveryRateAppLimited != want {
		t.Errorf("application-limited sender: DeliveryRateAppLimited %v, getsockopt(TCP_INFO) byte 7 %08b; want both set",
			info.DeliveryRateAppLimited, b7)
	}
}

// A dual-stack AF_INET6 socket connected to a v4-mapped address (Java's
// default) is found for the IPv4 flow, with its congestion control.
func TestNetlinkV4MappedSocket(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	fd, err := unix.Socket(unix.AF_INET6, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("an IPv6 TCP socket (the dual-stack sender this test needs): %v", err)
	}
	defer unix.Close(fd)
	if err := unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, 0); err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).AddrPort().Port()
	mapped := netip.AddrFrom16(netip.MustParseAddr("127.0.0.1").As16())
	if err := unix.Connect(fd, &unix.SockaddrInet6{Port: int(port), Addr: mapped.As16()}); err != nil {
		t.Fatalf("connect to [%v]:%d: %v", mapped, port, err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	local := netip.AddrPortFrom(netip.AddrFrom16(sa.(*unix.SockaddrInet6).Addr), uint16(sa.(*unix.SockaddrInet6).Port))
	flow := loopbackFlow(ln, local, netip.AddrPortFrom(mapped, port))
	if _, err := unix.Write(fd, make([]byte, 64<<10)); err != nil {
		t.Fatal(err)
	}
	r, err := newNetlinkReader("")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, f := range []proflow.FlowID{flow, {Src: mapped, Dst: mapped, SrcPort: flow.SrcPort, DstPort: flow.DstPort, Proto: proflow.ProtoTCP}} {
		info, err := r.read(context.Background(), f, time.Second)
		if err != nil {
			t.Fatalf("%v over an AF_INET6 socket: %v, want its TCP_INFO", f, err)
		}
		if info.State != "established" || info.CongestionControl == "" {
			t.Errorf("%v: state %q, congestion control %q; want established and a name", f, info.State, info.CongestionControl)
		}
	}
}
