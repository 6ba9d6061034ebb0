package ovsfabric

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// A delay line gives a host's link a round-trip time: kernel here has no
// netem, so a small process does what netem's delay would. It runs in a
// network namespace of its own between two veths, one to the host's eth0
// and one to the host's port on its leaf bridge, reads every frame from
// either with an AF_PACKET socket and writes it out of the other one
// half the round trip later (a FIFO in arrival order, so frames keep their
// order):
//
//	host ns: eth0 ── <p>h1x │ delay ns <p>dh1 │ <p>h1y ── <p>h1 (port of leaf1)
//
// Every path of the host's flows crosses it, whichever aggregation switch
// carries them.

// delayLineQueue is the most frames a delay line holds per direction; more
// arriving while it is full are dropped (a tail-drop queue, as netem's
// limit). At 10 Mbit/s and 50 ms one way that is ~40 frames, so it only
// bounds a runaway sender.
const delayLineQueue = 10000

// delayNS returns the namespace of host's delay line.
func (f *Fabric) delayNS(host string) string { return f.cfg.Prefix + "d" + host }

// delayed reports whether host's link has a delay line.
func (f *Fabric) delayed(host string) bool {
	if f.cfg.RTT <= 0 {
		return false
	}
	for _, h := range f.cfg.RTTHosts {
		if h == host {
			return true
		}
	}
	return false
}

// linkDelayedHost builds host's link with a delay line in it: the host
// side (eth0 in ns), the bridge side (the root device dev) and the delay
// line's namespace holding the two veths between them. The delay line
// itself starts in startDelayLines, once the bridge side is a port.
func (f *Fabric) linkDelayedHost(ctx context.Context, host, ns, dev string) error {
	dns := f.delayNS(host)
	steps := [][]string{
		{"ip", "netns", "add", dns},
		{"ip", "netns", "exec", dns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"},
		{"ip", "netns", "exec", dns, "sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1"},
		{"ip", "link", "add", dev, "type", "veth", "peer", "name", dev + "y"},
		{"ip", "link", "add", dev + "n", "type", "veth", "peer", "name", dev + "x"},
		{"ip", "link", "set", dev + "x", "netns", dns},
		{"ip", "link", "set", dev + "y", "netns", dns},
		{"ip", "link", "set", dev + "n", "netns", ns},
	}
	for _, s := range steps {
		if err := f.run(ctx, s[0], s[1:]...); err != nil {
			return err
		}
	}
	for _, d := range []string{dev + "x", dev + "y"} {
		if err := f.linkUp(ctx, dns, d); err != nil {
			return err
		}
		// Frames of at most one MTU each way, and every frame whatever
		// its destination address.
		if err := f.run(ctx, "ip", "netns", "exec", dns, "ethtool", "-K", d, "gro", "off", "gso", "off", "tso", "off"); err != nil {
			return err
		}
		if err := f.run(ctx, "ip", "-n", dns, "link", "set", d, "promisc", "on"); err != nil {
			return err
		}
	}
	return nil
}

// startDelayLines starts the delay line of every delayed host. They run
// until Down (or until this process dies: childAttr).
func (f *Fabric) startDelayLines(ctx context.Context) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("ovsfabric: delay line: %w", err)
	}
	for _, lf := range f.cfg.Wiring.Leaves {
		for _, h := range lf.Hosts {
			if !f.delayed(h.Name) {
				continue
			}
			dev := f.cfg.Prefix + h.Name
			// Not under ctx: the delay line lives as long as the fabric,
			// which Down ends.
			cmd := exec.Command("ip", "netns", "exec", f.delayNS(h.Name), exe,
				"-a", dev+"x", "-b", dev+"y", "-delay", (f.cfg.RTT / 2).String())
			cmd.SysProcAttr = childAttr()
			cmd.Env = append(os.Environ(), TrafficEnv+"=delay")
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				return fmt.Errorf("ovsfabric: delay line of %s: %w", h.Name, err)
			}
			done := make(chan struct{})
			go func() { defer close(done); _ = cmd.Wait() }()
			f.delayLines = append(f.delayLines, delayLine{cmd: cmd, done: done})
			f.cfg.Logger.Info("ovsfabric: delay line", "host", h.Name, "rtt", f.cfg.RTT, "ns", f.delayNS(h.Name))
		}
	}
	// The delay line's sockets must be bound before traffic counts on it.
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(200 * time.Millisecond):
	}
	for _, d := range f.delayLines {
		select {
		case <-d.done:
			return fmt.Errorf("ovsfabric: delay line %s exited at start: %v", d.cmd.String(), d.cmd.ProcessState)
		default:
		}
	}
	return nil
}

// delayLine is a running delay line process.
type delayLine struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once it has exited
}

// stopDelayLines ends every delay line and waits for them.
func (f *Fabric) stopDelayLines() {
	for _, d := range f.delayLines {
		stopGroup(d.cmd, d.done)
	}
	f.delayLines = nil
}

// runDelayLineMain is the delay line process (TrafficEnv "delay"): it
// relays frames between devices a and b, each held oneWay, until killed.
func runDelayLineMain(args []string) error {
	fs := flag.NewFlagSet("delay", flag.ContinueOnError)
	a := fs.String("a", "", "first device")
	b := fs.String("b", "", "second device")
	oneWay := fs.Duration("delay", 0, "how long each frame is held, each way")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *a == "" || *b == "" || *oneWay < 0 {
		return fmt.Errorf("delay: -a %q -b %q -delay %v, want two devices and a delay of at least 0", *a, *b, *oneWay)
	}
	return runDelayLine(*a, *b, *oneWay)
}

// runDelayLine relays frames both ways between devices a and b, holding
// each one oneWay. It returns when a socket fails.
func runDelayLine(a, b string, oneWay time.Duration) error {
	fa, err := openPacketSocket(a)
	if err != nil {
		return err
	}
	defer unix.Close(fa)
	fb, err := openPacketSocket(b)
	if err != nil {
		return err
	}
	defer unix.Close(fb)
	errc := make(chan error, 2)
	go func() { errc <- relay(fa, fb, oneWay, a+"→"+b) }()
	go func() { errc <- relay(fb, fa, oneWay, b+"→"+a) }()
	return <-errc
}

// openPacketSocket returns a raw AF_PACKET socket bound to dev that sees
// every frame dev receives and none it sends.
func openPacketSocket(dev string) (int, error) {
	ifi, err := net.InterfaceByName(dev)
	if err != nil {
		return -1, fmt.Errorf("delay: %w", err)
	}
	proto := htons(unix.ETH_P_ALL)
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, int(proto))
	if err != nil {
		return -1, fmt.Errorf("delay: AF_PACKET socket on %s: %w", dev, err)
	}
	opts := []struct{ level, opt, v int }{
		{unix.SOL_PACKET, unix.PACKET_IGNORE_OUTGOING, 1},
		{unix.SOL_SOCKET, unix.SO_RCVBUF, 4 << 20},
		{unix.SOL_SOCKET, unix.SO_SNDBUF, 4 << 20},
	}
	for _, o := range opts {
		if err := unix.SetsockoptInt(fd, o.level, o.opt, o.v); err != nil {
			unix.Close(fd)
			return -1, fmt.Errorf("delay: socket option %d on %s: %w", o.opt, dev, err)
		}
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: proto, Ifindex: ifi.Index}); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("delay: bind to %s: %w", dev, err)
	}
	return fd, nil
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// heldFrame is a frame and when it is due out.
type heldFrame struct {
	due   time.Time
	frame []byte
}

// relay reads frames from in and writes each to out oneWay after it
// arrived, in arrival order; at most delayLineQueue wait at once.
func relay(in, out int, oneWay time.Duration, name string) error {
	q := make(chan heldFrame, delayLineQueue)
	var dropped atomic.Int64
	werr := make(chan error, 1)
	go func() {
		for h := range q {
			if d := time.Until(h.due); d > 0 {
				time.Sleep(d)
			}
			if _, err := unix.Write(out, h.frame); err != nil {
				if errors.Is(err, unix.EBADF) || errors.Is(err, unix.ENODEV) {
					werr <- fmt.Errorf("delay %s: write: %w", name, err)
					return
				}
				dropped.Add(1) // EMSGSIZE, ENOBUFS, a device going down: lost, as on a wire
			}
		}
	}()
	buf := make([]byte, 1<<16)
	for {
		n, from, err := unix.Recvfrom(in, buf, 0)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			close(q)
			return fmt.Errorf("delay %s: read: %w", name, err)
		}
		if ll, ok := from.(*unix.SockaddrLinklayer); ok && ll.Pkttype == unix.PACKET_OUTGOING {
			continue
		}
		h := heldFrame{due: time.Now().Add(oneWay), frame: append([]byte(nil), buf[:n]...)}
		select {
		case q <- h:
		case err := <-werr:
			return err
		default:
			dropped.Add(1)
		}
	}
}
