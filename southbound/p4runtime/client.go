package p4runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/p4runtime/p4"
)

// Client programs and reads the leaf switches of a fabric over P4Runtime.
// It is a proflow.Enforcer, proflow.Locator and proflow.FlowValidator
// (path_select entries on the leaves, both directions) and a
// proflow.Telemetry (counters).
//
// Create one with Dial and release it with Close. A Client is safe for
// concurrent use.
type Client struct {
	cfg      Config
	ids      ids
	conns    []*grpc.ClientConn
	sessions []*session
	src      int // leaf index of the protected flow's source

	cancel context.CancelFunc
	wg     sync.WaitGroup
	closed atomic.Bool // set by Close

	placeMu sync.Mutex // one Place/Locate/Remove at a time
	tel     telemetryState
	m       *metrics

	// placed holds the flows this client placed and has not released, in
	// the direction it placed them; guarded by placeMu. A flow and its
	// reverse take the same entries, so at most one of the two is here.
	placed map[proflow.FlowID]struct{}
}

var (
	_ proflow.Enforcer      = (*Client)(nil)
	_ proflow.Locator       = (*Client)(nil)
	_ proflow.Telemetry     = (*Client)(nil)
	_ proflow.FlowValidator = (*Client)(nil)
	_ proflow.BatchEnforcer = (*Client)(nil)
	_ proflow.Releaser      = (*Client)(nil)
)

// ids are the P4Info IDs the client reads and matches with, resolved once.
type ids struct {
	pathTable, setUplink, portParam    uint32
	fSrc, fDst, fProto, fSport, fDport uint32
	portRx, portTx                     uint32
}

func resolve(info *p4configv1.P4Info) (ids, error) {
	var r ids
	for _, t := range info.GetTables() {
		if t.GetPreamble().GetName() != p4.PathTable {
			continue
		}
		r.pathTable = t.GetPreamble().GetId()
		for _, mf := range t.GetMatchFields() {
			switch mf.GetName() {
			case p4.FieldIPv4Src:
				r.fSrc = mf.GetId()
			case p4.FieldIPv4Dst:
				r.fDst = mf.GetId()
			case p4.FieldIPProto:
				r.fProto = mf.GetId()
			case p4.FieldL4SrcPort:
				r.fSport = mf.GetId()
			case p4.FieldL4DstPort:
				r.fDport = mf.GetId()
			}
		}
	}
	for _, a := range info.GetActions() {
		if a.GetPreamble().GetName() == p4.SetUplinkAction {
			r.setUplink = a.GetPreamble().GetId()
			for _, prm := range a.GetParams() {
				if prm.GetName() == p4.ParamPort {
					r.portParam = prm.GetId()
				}
			}
		}
	}
	for _, c := range info.GetCounters() {
		switch c.GetPreamble().GetName() {
		case p4.PortRxCounter:
			r.portRx = c.GetPreamble().GetId()
		case p4.PortTxCounter:
			r.portTx = c.GetPreamble().GetId()
		}
	}
	for name, id := range map[string]uint32{
		p4.PathTable: r.pathTable, p4.SetUplinkAction: r.setUplink, p4.SetUplinkAction + "(" + p4.ParamPort + ")": r.portParam,
		p4.FieldIPv4Src: r.fSrc, p4.FieldIPv4Dst: r.fDst, p4.FieldIPProto: r.fProto, p4.FieldL4SrcPort: r.fSport, p4.FieldL4DstPort: r.fDport,
		p4.PortRxCounter: r.portRx, p4.PortTxCounter: r.portTx,
	} {
		if id == 0 {
			return r, fmt.Errorf("p4runtime: pipeline p4info has no %s (leaf.p4's objects are required)", name)
		}
	}
	return r, nil
}

// Dial connects to every leaf's P4Runtime server, opens one stream per
// device and arbitrates with cfg.ElectionID. Where the client is primary it
// checks the device's pipeline cookie and pushes Config.Pipeline if it
// differs. Dial returns once every device has answered the arbitration and
// every device where the client is primary is ready, or fails when ctx ends
// first. Streams are watched from then on: a broken stream is reopened with
// backoff and arbitrated again, and the pipeline checked again on every
// return to primary.
func Dial(ctx context.Context, cfg Config) (*Client, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r, err := resolve(cfg.Pipeline.P4Info)
	if err != nil {
		return nil, err
	}
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, fmt.Errorf("p4runtime: metrics: %w", err)
	}
	c := &Client{cfg: cfg, ids: r, m: m, placed: map[proflow.FlowID]struct{}{}}
	c.src, _ = cfg.leafOf(cfg.Flow.Src)
	creds := insecure.NewCredentials()
	if cfg.TLS != nil {
		creds = credentials.NewTLS(cfg.TLS)
	}
	opts := append([]grpc.DialOption{grpc.WithTransportCredentials(creds)}, cfg.DialOptions...)
	if m != nil {
		opts = append(opts, grpc.WithChainUnaryInterceptor(m.countWrites))
	}
	byAddr := map[string]p4v1.P4RuntimeClient{}
	for _, l := range cfg.Leaves {
		rpc, ok := byAddr[l.Addr]
		if !ok {
			conn, err := grpc.NewClient(l.Addr, opts...)
			if err != nil {
				c.closeConns()
				m.unregister(cfg.Registerer)
				return nil, fmt.Errorf("p4runtime: leaf %s: dial %s: %w", l.Name, l.Addr, err)
			}
			c.conns = append(c.conns, conn)
			rpc = p4v1.NewP4RuntimeClient(conn)
			byAddr[l.Addr] = rpc
		}
		c.sessions = append(c.sessions, newSession(&c.cfg, l, rpc, m))
	}
	c.tel.init(&c.cfg)
	runCtx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	for _, s := range c.sessions {
		c.wg.Add(2)
		go func() { defer c.wg.Done(); s.run(runCtx) }()
		go func() { defer c.wg.Done(); s.prepare(runCtx) }()
	}
	if err := c.waitArbitrated(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (c *Client) waitArbitrated(ctx context.Context) error {
	for _, s := range c.sessions {
		for {
			ok, changed := s.settled()
			if ok {
				break
			}
			select {
			case <-changed:
			case <-ctx.Done():
				return fmt.Errorf("p4runtime: %s (device %d): no arbitration answer: %w", s.leaf.Name, s.leaf.DeviceID,
					errors.Join(ctx.Err(), s.lastError()))
			}
		}
	}
	return nil
}

func (s *session) lastError() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastErr
}

// Close ends the streams and connections. The server then forgets this
// client; if it was primary, the devices are left without one (or a
// TakeOver backup takes over). Afterwards Place, Remove, Locate, Collect
// and Overlay fail with an error wrapping ErrClosed. Close unregisters the
// client's metrics from Config.Registerer, so a new Client may register
// its own there.
func (c *Client) Close() error {
	c.closed.Store(true)
	c.cancel()
	c.wg.Wait()
	c.m.unregister(c.cfg.Registerer)
	return c.closeConns()
}

// checkOpen returns an error wrapping ErrClosed after Close.
func (c *Client) checkOpen(op string) error {
	if c.closed.Load() {
		return fmt.Errorf("p4runtime: %s: %w", op, ErrClosed)
	}
	return nil
}

func (c *Client) closeConns() error {
	var errs []error
	for _, conn := range c.conns {
		errs = append(errs, conn.Close())
	}
	c.conns = nil
	return errors.Join(errs...)
}

// Primary reports whether the client is primary on every leaf.
func (c *Client) Primary() bool {
	for _, s := range c.sessions {
		if p, _, _ := s.state(); !p {
			return false
		}
	}
	return true
}

// WaitPrimary blocks until the client is primary on every leaf and each
// device runs the configured pipeline, or ctx ends.
func (c *Client) WaitPrimary(ctx context.Context) error {
	for _, s := range c.sessions {
		for {
			s.mu.Lock()
			p, changed := s.primary && s.ready, s.changed
			s.mu.Unlock()
			if p {
				break
			}
			select {
			case <-changed:
			case <-ctx.Done():
				return fmt.Errorf("p4runtime: waiting to be primary: %w", errors.Join(ctx.Err(), s.notPrimary("wait")))
			}
		}
	}
	return nil
}

// Fenced reports whether some leaf has fenced the client: it reported a
// higher election ID for the client's role (Config.Role) than the one the
// client arbitrates with, so a newer owner is primary there and this
// client's writes are refused (errors wrapping ErrFenced). Status says
// which leaves, and the highest ID each reported.
func (c *Client) Fenced() bool {
	for _, s := range c.sessions {
		s.mu.Lock()
		f := s.fenced
		s.mu.Unlock()
		if f {
			return true
		}
	}
	return false
}

// LeafStatus describes one leaf session.
type LeafStatus struct {
	Leaf       string
	Device     uint64
	Role       string // Config.Role; empty for the default role
	Primary    bool
	ElectionID ElectionID // the ID the session arbitrates with now
	// Highest is the highest election ID the device reported for the role
	// (zero before any report).
	Highest ElectionID
	// Fenced is set while Highest is above ElectionID: a newer client is
	// primary for the role and this one's writes are refused (ErrFenced).
	Fenced    bool
	LastError error // the last stream or arbitration error, if any
}

// Status returns the state of every leaf session, in Config.Leaves order.
func (c *Client) Status() []LeafStatus {
	out := make([]LeafStatus, len(c.sessions))
	for i, s := range c.sessions {
		s.mu.Lock()
		out[i] = LeafStatus{Leaf: s.leaf.Name, Device: s.leaf.DeviceID, Role: c.cfg.Role, Primary: s.primary, ElectionID: s.election,
			Highest: s.highest, Fenced: s.fenced, LastError: s.lastErr}
		s.mu.Unlock()
	}
	return out
}

func (c *Client) logger() *slog.Logger { return c.cfg.Logger }
