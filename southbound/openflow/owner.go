package openflow

import (
	"fmt"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/openflow/internal/ofwire"
)

// Owner fences the server's writes when several controllers share the
// switches, each owning some of the protected flows (replicas of proflow
// serve coordinated through etcd). The server asks it right before every
// write of a flow's override rules — Place, PlaceBatch and
// Release, the lease refresh, the re-install on a reconnecting switch:
// when ok is false the write is refused with an error wrapping ErrFenced
// (the refresh and the re-install skip the flow, so its lease lapses);
// otherwise the rules the write creates carry cookie, the owner's cookie
// (for a replica: its shard and the epoch of its ownership).
//
// Deletes are cookie-masked: the server deletes a rule only with the exact
// cookie it was installed (or read back by Locate) with, so a replica that
// lost a flow can never delete the rules a newer owner installed, whatever
// it still believes. A new owner takes a flow over by calling Locate, which
// adopts the highest-priority override it finds whatever its cookie; its
// next placement then goes in one priority above and deletes the old
// owner's rules by their cookie (make-before-break as always). Deleting
// rules the server installed itself, with its own cookie (a rollback, a
// retried delete), is not fenced: it cannot touch another owner's rules.
//
// With an Owner, the cookies of override rules are the owner's, so the
// server no longer finds them by Config.CookiePrefix: it reads flow
// statistics of every rule and recognises overrides by their priority
// (Config.OverridePriority and above) and match. Base rules still carry
// Config.CookiePrefix and are not fenced: every replica installs the same.
//
// OwnerCookie is called with the server's placement lock held and must not
// block on the server.
type Owner interface {
	OwnerCookie(flow proflow.FlowID) (cookie uint64, ok bool)
}

// OwnerFunc adapts a function to Owner.
type OwnerFunc func(flow proflow.FlowID) (cookie uint64, ok bool)

// OwnerCookie returns f(flow).
func (f OwnerFunc) OwnerCookie(flow proflow.FlowID) (uint64, bool) { return f(flow) }

// overrideCookie returns the cookie of flow's override rules of generation
// gen: the owner's cookie with an Owner, else the server's layout (see
// rules.go). Without an Owner it never fails.
func (s *Server) overrideCookie(flow proflow.FlowID, gen uint16) (uint64, error) {
	if s.cfg.Owner == nil {
		return s.cookie(kindOverride, flowTag(flow), gen), nil
	}
	c, ok := s.cfg.Owner.OwnerCookie(flow)
	if !ok {
		return 0, fmt.Errorf("flow %v: %w", flow, ErrFenced)
	}
	return c, nil
}

// writable reports whether the server may write flow's override rules now.
func (s *Server) writable(flow proflow.FlowID) bool {
	if s.cfg.Owner == nil {
		return true
	}
	_, ok := s.cfg.Owner.OwnerCookie(flow)
	return ok
}

// isOverride reports whether a rule read from a switch is an override: at
// an override priority and not a base rule.
func (s *Server) isOverride(f *ofwire.FlowStats) bool {
	return f.Priority > s.cfg.OverridePriority && f.Priority <= s.cfg.OverridePriority+priorityGenerations &&
		f.Cookie != s.cookie(kindBase, 0, 0)
}
