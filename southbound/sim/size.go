package sim

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// WithFabric returns c resized to switches aggregation switches (2 or
// more) and congestionLeaves congestion leaves (1 or more), keeping
// HostsPerLeaf and everything else (package documentation, "Fabrics of any
// size"). The congestion leaves are the first congestionLeaves leaves and
// one more leaf follows them, so the fabric has congestionLeaves+1 leaves:
// a host on one of the first congestionLeaves leaves keeps its name, and a
// host on c's last leaf (the protected flow's destination and the
// congestion sink in the built-in profiles) keeps its place on the new last
// leaf. A protected host or sink on another leaf is an error.
//
// When c already has that shape (the built-in profiles at 4 switches and 3
// congestion leaves), WithFabric returns c unchanged. Otherwise the Name
// gets the size, "testbed-6x3" (replacing a size it had), and the result
// is validated.
func (c Config) WithFabric(switches, congestionLeaves int) (Config, error) {
	where := fmt.Sprintf("sim: fabric %dx%d", switches, congestionLeaves)
	if switches < 2 || switches > MaxSwitches {
		return Config{}, fmt.Errorf("%s: %d switches, want 2..%d", where, switches, MaxSwitches)
	}
	if congestionLeaves < 1 || congestionLeaves >= MaxLeaves {
		return Config{}, fmt.Errorf("%s: %d congestion leaves, want 1..%d", where, congestionLeaves, MaxLeaves-1)
	}
	if c.HostsPerLeaf < 1 || c.Leaves < 2 {
		return Config{}, fmt.Errorf("%s: base profile %q has %d leaves of %d hosts, want at least 2 leaves of 1 host or more", where, c.Name, c.Leaves, c.HostsPerLeaf)
	}
	d := c
	d.Switches, d.Leaves = switches, congestionLeaves+1
	d.CongestionLeaves = make([]int, congestionLeaves)
	for i := range d.CongestionLeaves {
		d.CongestionLeaves[i] = i
	}
	for _, h := range []struct {
		field string
		name  *string
	}{{"protected_src", &d.ProtectedSrc}, {"protected_dst", &d.ProtectedDst}, {"congestion_sink", &d.CongestionSink}} {
		i, err := c.hostIndex(*h.name)
		if err != nil {
			return Config{}, fmt.Errorf("%s: %s: %w", where, h.field, err)
		}
		leaf, slot := i/c.HostsPerLeaf, i%c.HostsPerLeaf
		switch {
		case leaf == c.Leaves-1:
			leaf = congestionLeaves
		case leaf >= congestionLeaves:
			return Config{}, fmt.Errorf("%s: %s %s is on %s, want it on the last leaf (%s) or on one of the %d congestion leaves", where, h.field, *h.name, leafName(leaf), leafName(c.Leaves-1), congestionLeaves)
		}
		*h.name = hostName(leaf*c.HostsPerLeaf + slot)
	}
	if sameShape(c, d) {
		return c, nil
	}
	base, _, k := splitProfileName(c.Name)
	d.Name = base + sizeSuffix(switches, congestionLeaves) + rateSuffix(k)
	if err := d.Validate(); err != nil {
		return Config{}, fmt.Errorf("%s: %w", where, err)
	}
	return d, nil
}

// sameShape reports whether a and b have the same fabric: switches,
// leaves, hosts, congestion leaves, protected hosts and sink.
func sameShape(a, b Config) bool {
	return a.Switches == b.Switches && a.Leaves == b.Leaves && a.HostsPerLeaf == b.HostsPerLeaf &&
		slices.Equal(a.CongestionLeaves, b.CongestionLeaves) && a.ProtectedSrc == b.ProtectedSrc &&
		a.ProtectedDst == b.ProtectedDst && a.CongestionSink == b.CongestionSink
}

// ScaleRates returns c with every rate, and every size that is a rate
// times a time, multiplied by k, a positive finite number; times, packet
// sizes, windows counted in packets and fractions stay (package
// documentation, "Fabrics of any size", says which fields and why). A
// fabric at k times the link speed then has the same dynamics in units of
// its bucket rate, as far as TCP allows: a window of InitialWindow packets
// takes log2(k) more round trips to grow to the same share of the bucket.
// Scenarios state absolute rates; Scenario.ScaleRates scales those.
//
// k = 1 returns c unchanged. Otherwise the Name gets the factor,
// "testbed@x2" (the factor it had multiplied in), and the result is
// validated: a small k may leave a queue smaller than one packet.
func (c Config) ScaleRates(k float64) (Config, error) {
	if err := checkRateFactor(k); err != nil {
		return Config{}, err
	}
	if k == 1 {
		return c, nil
	}
	d := c
	for _, f := range d.rateFields() {
		*f *= k
	}
	base, size, old := splitProfileName(c.Name)
	d.Name = base + size + rateSuffix(old*k)
	if err := d.Validate(); err != nil {
		return Config{}, fmt.Errorf("sim: rates x%v: %w", k, err)
	}
	return d, nil
}

// RateFactor returns the rate factor ScaleRates and LoadProfile recorded
// in c's Name ("testbed@x2": 2), or 1 when the name records none. A
// scenario written for the unscaled fabric offers the same share of the
// bucket rate here once Scenario.ScaleRates multiplies it by this factor.
func (c Config) RateFactor() float64 {
	_, _, k := splitProfileName(c.Name)
	return k
}

// checkRateFactor checks a rate factor: positive and finite.
func checkRateFactor(k float64) error {
	if !(k > 0) || math.IsInf(k, 0) {
		return fmt.Errorf("sim: rate factor %v, want a positive finite number", k)
	}
	return nil
}

// rateFields returns the fields of c that ScaleRates multiplies: rates in
// bytes per second and sizes in bytes that are a rate times a time.
func (c *Config) rateFields() []*float64 {
	return []*float64{
		&c.HostLinkRate, &c.HostQueueLimit,
		&c.FabricLinkRate,
		&c.BucketRate, &c.BucketBurst, &c.BucketQueueLimit,
		&c.FlowRateLimit, &c.FlowQueueLimit,
		&c.UncountedRate, &c.UncountedBurst, &c.UncountedQueueLimit,
		&c.ReceiveWindow,
	}
}

// ScaleRates returns a copy of s with every absolute rate multiplied by k:
// congesters' stream caps, protected flows' caps, and the rates of
// protected flows of kind rate and onoff given in bytes per second (a
// RateFraction already follows the bucket rate; an rr flow's request
// sizes and rates stay). With Config.ScaleRates(k) it keeps the offered
// load the same share of the bucket rate.
func (s *Scenario) ScaleRates(k float64) (*Scenario, error) {
	if err := checkRateFactor(k); err != nil {
		return nil, err
	}
	d := s.Clone()
	for i := range d.Congesters {
		d.Congesters[i].StreamCap *= Rate(k)
	}
	for i := range d.Protected {
		d.Protected[i].Cap *= Rate(k)
		d.Protected[i].Kind.Rate *= Rate(k)
	}
	d.ProtectedKind.Rate *= Rate(k)
	return d, nil
}

// sizeSuffix names a fabric size in a profile name: "-6x3".
func sizeSuffix(switches, congestionLeaves int) string {
	return "-" + strconv.Itoa(switches) + "x" + strconv.Itoa(congestionLeaves)
}

// rateSuffix names a rate factor in a profile name: "@x2", or nothing for 1.
func rateSuffix(k float64) string {
	if k == 1 {
		return ""
	}
	return "@x" + strconv.FormatFloat(k, 'g', -1, 64)
}

// splitProfileName splits a profile name into its base, its size suffix
// ("-6x3" or "") and its rate factor (1 without "@x…").
func splitProfileName(name string) (base, size string, k float64) {
	base, k = name, 1
	if i := strings.LastIndex(base, "@x"); i >= 0 {
		if v, err := strconv.ParseFloat(base[i+2:], 64); err == nil && checkRateFactor(v) == nil {
			base, k = base[:i], v
		}
	}
	if s, l, ok := parseSizeSuffix(base); ok {
		size = sizeSuffix(s, l)
		base = strings.TrimSuffix(base, size)
	}
	return base, size, k
}

// parseSizeSuffix reads a trailing "-<switches>x<leaves>" of name.
func parseSizeSuffix(name string) (switches, congestionLeaves int, ok bool) {
	i := strings.LastIndex(name, "-")
	if i < 0 {
		return 0, 0, false
	}
	s, l, err := ParseFabricSize(name[i+1:])
	if err != nil || name[i:] != sizeSuffix(s, l) {
		return 0, 0, false
	}
	return s, l, true
}

// ParseFabricSize parses a fabric size "<switches>x<congestion leaves>",
// for example "6x3", as WithFabric takes it.
func ParseFabricSize(s string) (switches, congestionLeaves int, err error) {
	a, b, ok := strings.Cut(s, "x")
	sw, errA := strconv.Atoi(a)
	cl, errB := strconv.Atoi(b)
	if !ok || errA != nil || errB != nil || sw < 2 || cl < 1 {
		return 0, 0, fmt.Errorf("sim: fabric size %q, want SWITCHESxLEAVES such as 6x3 (2 or more aggregation switches, 1 or more congestion leaves)", s)
	}
	return sw, cl, nil
}
