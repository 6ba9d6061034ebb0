package proflow

import (
	"errors"
	"fmt"
)

// Topology is the explicit description of the fabric the controller reasons
// about. The order of Switches fixes the switch index used everywhere else:
// in Observation.Switches, in policy scores, in the one-hot placement of the
// state vector and in Enforcer.Place. The same holds for Leaves.
type Topology struct {
	// Switches names the aggregation switches S, in index order.
	Switches []string `json:"switches"`
	// Leaves names the leaves L that host congestion sources, in index order.
	Leaves []string `json:"leaves"`
	// BucketRate is the token-bucket rate C of every aggregation uplink, in
	// bytes per second. It scales the rate signals of the state vector.
	BucketRate float64 `json:"bucket_rate_bytes_per_sec"`
}

// PaperTopology returns the testbed of the paper: four aggregation switches,
// three congestion leaves and 200 Mbit/s buckets.
func PaperTopology() Topology {
	return Topology{
		Switches:   []string{"agg1", "agg2", "agg3", "agg4"},
		Leaves:     []string{"leaf1", "leaf2", "leaf3"},
		BucketRate: 200e6 / 8,
	}
}

// NumSwitches returns |S|.
func (t Topology) NumSwitches() int { return len(t.Switches) }

// NumLeaves returns |L|.
func (t Topology) NumLeaves() int { return len(t.Leaves) }

// SwitchIndex returns the index of the named aggregation switch.
func (t Topology) SwitchIndex(name string) (int, error) {
	for i, s := range t.Switches {
		if s == name {
			return i, nil
		}
	}
	return -1, &UnknownSwitchError{Name: name, Known: t.Switches}
}

// Validate checks that the topology can drive a controller: at least two
// aggregation switches (otherwise there is nowhere to move), unique non-empty
// names, and a positive bucket rate.
func (t Topology) Validate() error {
	var errs []error
	if len(t.Switches) < 2 {
		errs = append(errs, fmt.Errorf("topology: %d aggregation switches, want at least 2", len(t.Switches)))
	}
	errs = append(errs, uniqueNames("switch", t.Switches), uniqueNames("leaf", t.Leaves))
	if !(t.BucketRate > 0) || isInf(t.BucketRate) {
		errs = append(errs, fmt.Errorf("topology: bucket rate %v bytes/s, want a positive finite rate", t.BucketRate))
	}
	return errors.Join(errs...)
}

func uniqueNames(kind string, names []string) error {
	seen := make(map[string]int, len(names))
	for i, n := range names {
		if n == "" {
			return fmt.Errorf("topology: %s %d has an empty name", kind, i)
		}
		if j, dup := seen[n]; dup {
			return fmt.Errorf("topology: %s name %q used at index %d and %d, want unique names", kind, n, j, i)
		}
		seen[n] = i
	}
	return nil
}
