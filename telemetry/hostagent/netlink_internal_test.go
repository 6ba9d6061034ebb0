package hostagent

import (
	"testing"

	"github.com/vishvananda/netlink"
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
