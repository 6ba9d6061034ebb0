package tcstat

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// netlinkReader returns the agent's default ReadFunc: it asks the kernel
// over rtnetlink (the interface tc itself uses, without running a
// process) for the root qdisc of each device, in the network namespace at
// nsPath (the caller's own when empty). One read is one link lookup per
// device and one qdisc dump, on sockets opened for that read.
func netlinkReader(nsPath string, timeout time.Duration) ReadFunc {
	return func(ctx context.Context, devs []string) (map[string]Qdisc, error) {
		ns := netns.None()
		where := "this network namespace"
		if nsPath != "" {
			var err error
			if ns, err = netns.GetFromPath(nsPath); err != nil {
				return nil, fmt.Errorf("network namespace %s: %w", nsPath, err)
			}
			defer ns.Close()
			where = "network namespace " + nsPath
		}
		h, err := netlink.NewHandleAt(ns, unix.NETLINK_ROUTE)
		if err != nil {
			return nil, fmt.Errorf("netlink socket in %s: %w", where, err)
		}
		defer h.Close()
		// The sockets time out by themselves: netlink calls take no context.
		to := timeout
		if dl, ok := ctx.Deadline(); ok {
			to = min(to, time.Until(dl))
		}
		if to < time.Millisecond {
			return nil, fmt.Errorf("netlink read: %w", context.DeadlineExceeded)
		}
		if err := h.SetSocketTimeout(to); err != nil {
			return nil, fmt.Errorf("netlink socket timeout %v: %w", to, err)
		}
		byIndex := make(map[int]string, len(devs))
		for _, d := range devs {
			l, err := h.LinkByName(d)
			if err != nil {
				var nf netlink.LinkNotFoundError
				if errors.As(err, &nf) {
					return nil, fmt.Errorf("interface %q: no such device in %s", d, where)
				}
				return nil, fmt.Errorf("interface %q: %w", d, err)
			}
			byIndex[l.Attrs().Index] = d
		}
		qs, err := qdiscList(h)
		if err != nil {
			return nil, fmt.Errorf("list qdiscs in %s: %w", where, err)
		}
		out := make(map[string]Qdisc, len(devs))
		for _, q := range qs {
			attrs := q.Attrs()
			dev, ok := byIndex[attrs.LinkIndex]
			if !ok || attrs.Parent != netlink.HANDLE_ROOT {
				continue
			}
			v, err := fromNetlink(q)
			if err != nil {
				return nil, fmt.Errorf("interface %q: %w", dev, err)
			}
			out[dev] = v
		}
		for _, d := range devs {
			if _, ok := out[d]; !ok {
				return nil, fmt.Errorf("interface %q has no root qdisc in %s", d, where)
			}
		}
		return out, nil
	}
}

// qdiscList dumps every qdisc, again when a concurrent change interrupted
// the dump (its result may be inconsistent then).
func qdiscList(h *netlink.Handle) ([]netlink.Qdisc, error) {
	var err error
	for range 3 {
		var qs []netlink.Qdisc
		if qs, err = h.QdiscList(nil); err == nil {
			return qs, nil
		}
		if !errors.Is(err, netlink.ErrDumpInterrupted) {
			break
		}
	}
	return nil, err
}

// fromNetlink converts a root qdisc's netlink statistics.
func fromNetlink(q netlink.Qdisc) (Qdisc, error) {
	attrs := q.Attrs()
	st := attrs.Statistics
	if st == nil || st.Basic == nil || st.Queue == nil {
		return Qdisc{}, fmt.Errorf("root qdisc %s %s: the kernel sent no statistics", q.Type(), handleString(attrs.Handle))
	}
	return Qdisc{
		Kind:           q.Type(),
		Handle:         handleString(attrs.Handle),
		Bytes:          st.Basic.Bytes,
		Packets:        uint64(st.Basic.Packets),
		Drops:          uint64(st.Queue.Drops),
		Overlimits:     uint64(st.Queue.Overlimits),
		BacklogBytes:   uint64(st.Queue.Backlog),
		BacklogPackets: uint64(st.Queue.Qlen),
	}, nil
}

// handleString formats a qdisc handle as tc prints it: "8001:" for a major
// number alone, "1:10" with a minor one.
func handleString(h uint32) string {
	if h&0xffff == 0 {
		return fmt.Sprintf("%x:", h>>16)
	}
	return fmt.Sprintf("%x:%x", h>>16, h&0xffff)
}
