package sim

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The held-out family (package documentation, "Held-out family"): FamilySize
// scenarios H1..H64, generated from a fixed PCG seed over the space the
// paper's scenarios sample (Appendix D). It is the yardstick for the learned
// agent against the rule-based baselines; no profile, reward, gate or model
// choice may look at it.
const (
	// FamilySize is the number of scenarios in the held-out family.
	FamilySize = 64
	// FamilyPrefix starts every family name: H1..H64.
	FamilyPrefix = "H"

	// familySeed1 and familySeed2 seed the PCG generator ("ProFlow",
	// "HeldOut" in ASCII). Changing them changes the family, which the
	// freeze test forbids.
	familySeed1 = 0x50726f466c6f77
	familySeed2 = 0x48656c644f7574

	// DevFamilyPrefix starts every name of the development family, D1..D64.
	DevFamilyPrefix = "D"
	// devFamilySeed2 replaces familySeed2 for the development family
	// ("DevDraw" in ASCII): the same design, other free draws.
	devFamilySeed2 = 0x44657644726177

	// SecondDevFamilyPrefix starts every name of the second development
	// family, E1..E64.
	SecondDevFamilyPrefix = "E"
	// secondDevFamilySeed2 replaces familySeed2 for the second development
	// family ("DevDrw2" in ASCII).
	secondDevFamilySeed2 = 0x44657644727732

	// familyHosts is the number of congester hosts at the built-in size,
	// h2..h6 (the testbed's congester leaves; they send to
	// Config.CongestionSink).
	familyHosts = 5
	// familySwitches is the number of aggregation switches at the built-in
	// size, agg1..agg4.
	familySwitches = 4
	// familyLeaves is the number of congestion leaves at the built-in size.
	familyLeaves = 3
	// familyMinHosts is the fewest congester hosts a family can be
	// generated for: a trap's elephant and a crowd of two.
	familyMinHosts = 3
	// familyMaxEntries is the most congester entries of one scenario.
	familyMaxEntries = 8
	// familyBrief is the longest full-rate visit to the protected flow's
	// switch that still counts as brief (N2's crowd stays 6 s).
	familyBrief = 6 * time.Second
	// familyLightLoad is the most capped load (sum of stream caps, in
	// bytes per second) on the protected flow's switch that counts as
	// light: 40 Mbit/s, a fifth of the testbed's 200 Mbit/s bucket (C1
	// offers 30 Mbit/s).
	familyLightLoad = Rate(40e6 / 8)
)

// FamilyScenarios returns the names of the held-out family, H1..H64, in
// order. They are not built-ins: BuiltinScenarios and BuiltinScenario do
// not know them, so "all built-in scenarios" keeps its meaning.
func FamilyScenarios() []string { return builtinFamily().names() }

// FamilyScenario returns a fresh copy of the held-out family's scenario
// name (H1..H64), validated against DefaultConfig. It generates the whole
// family each time (microseconds), so it keeps no state.
func FamilyScenario(name string) (*Scenario, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(name, FamilyPrefix))
	if !strings.HasPrefix(name, FamilyPrefix) || err != nil || n < 1 || n > FamilySize || FamilyPrefix+strconv.Itoa(n) != name {
		return nil, fmt.Errorf("sim: no held-out scenario %q, want %s1..%s%d", name, FamilyPrefix, FamilyPrefix, FamilySize)
	}
	return builtinFamily().member(n)
}

// DevFamilyScenarios returns the names of the development family, D1..D64,
// in order (package documentation, "Development family"): the held-out
// family's generator and design drawn from another seed, for choices to
// look at so that H1..H64 need not.
func DevFamilyScenarios() []string { return devFamily(devFirst).names() }

// DevFamilyScenariosFor returns the names of the development family of
// cfg's size: D1..D64 at 4×3, D6x3-1..D6x3-64 at 6×3 (the sized held-out
// family's generator and design, from the development seed mixed with the
// size).
func DevFamilyScenariosFor(cfg Config) ([]string, error) {
	return devScenariosFor(cfg, devFirst)
}

// SecondDevFamilyScenarios returns the names of the second development
// family, E1..E64, in order (package documentation, "Development
// family"): the same generator and design as D1..D64 and H1..H64 from a
// third seed, development data that no choice before session 24 looked
// at.
func SecondDevFamilyScenarios() []string { return devFamily(devSecond).names() }

// SecondDevFamilyScenariosFor returns the names of the second development
// family of cfg's size: E1..E64 at 4×3, E6x3-1..E6x3-64 at 6×3.
func SecondDevFamilyScenariosFor(cfg Config) ([]string, error) {
	return devScenariosFor(cfg, devSecond)
}

// devScenariosFor returns the names of development family dev at cfg's
// size.
func devScenariosFor(cfg Config, dev int) ([]string, error) {
	shape, err := sizedFamily(cfg.Switches, len(cfg.CongestionLeaves))
	if err != nil {
		return nil, err
	}
	shape.dev = dev
	return shape.names(), nil
}

// DevFamilyScenario returns a fresh copy of a development family's
// scenario name: D1..D64 or E1..E64 (validated against DefaultConfig) or,
// at another size, D<switches>x<leaves>-<n> or E<switches>x<leaves>-<n>
// such as D6x3-1 (validated against FamilyConfig of its size).
func DevFamilyScenario(name string) (*Scenario, error) {
	dev, prefix := devFirst, DevFamilyPrefix
	if strings.HasPrefix(name, SecondDevFamilyPrefix) {
		dev, prefix = devSecond, SecondDevFamilyPrefix
	}
	if n, err := strconv.Atoi(strings.TrimPrefix(name, prefix)); err == nil && strings.HasPrefix(name, prefix) {
		if n < 1 || n > FamilySize || prefix+strconv.Itoa(n) != name {
			return nil, fmt.Errorf("sim: no development scenario %q, want %s1..%s%d", name, prefix, prefix, FamilySize)
		}
		return devFamily(dev).member(n)
	}
	s, l, n, ok := parseSizedName(name, prefix)
	switch {
	case !ok:
		return nil, fmt.Errorf("sim: no development scenario %q, want %s1..%s%d, %s1..%s%d or D<switches>x<leaves>-<n> or E<switches>x<leaves>-<n> such as %s6x3-1", name, DevFamilyPrefix, DevFamilyPrefix, FamilySize, SecondDevFamilyPrefix, SecondDevFamilyPrefix, FamilySize, prefix)
	case s == familySwitches && l == familyLeaves:
		return nil, fmt.Errorf("sim: no development scenario %q: the %dx%d family is %s1..%s%d", name, s, l, prefix, prefix, FamilySize)
	}
	shape, err := sizedFamily(s, l)
	if err != nil {
		return nil, fmt.Errorf("sim: no development scenario %q: %w", name, err)
	}
	shape.dev = dev
	if n < 1 || n > FamilySize || shape.prefix()+strconv.Itoa(n) != name {
		return nil, fmt.Errorf("sim: no development scenario %q, want %s1..%s%d", name, shape.prefix(), shape.prefix(), FamilySize)
	}
	return shape.member(n)
}

// parseSizedName reads prefix<switches>x<leaves>-<n>.
func parseSizedName(name, prefix string) (switches, leaves, n int, ok bool) {
	rest, okPrefix := strings.CutPrefix(name, prefix)
	size, num, okCut := strings.Cut(rest, "-")
	n, errN := strconv.Atoi(num)
	s, l, errSize := ParseFabricSize(size)
	return s, l, n, okPrefix && okCut && errN == nil && errSize == nil
}

// SizedFamilyScenarios returns the names of the held-out family for a
// fabric of switches aggregation switches and congestionLeaves congestion
// leaves (package documentation, "Held-out family"): H1..H64 at the
// built-in 4×3, otherwise H<switches>x<leaves>-1 .. -64, "H6x3-1". The
// family of a size needs at least familyMinHosts congester hosts: 2 or
// more congestion leaves of the default two hosts.
func SizedFamilyScenarios(switches, congestionLeaves int) ([]string, error) {
	shape, err := sizedFamily(switches, congestionLeaves)
	if err != nil {
		return nil, err
	}
	return shape.names(), nil
}

// FamilyScenariosFor returns the names of the held-out family of cfg's
// size, as SizedFamilyScenarios does for cfg.Switches and its number of
// congestion leaves.
func FamilyScenariosFor(cfg Config) ([]string, error) {
	return SizedFamilyScenarios(cfg.Switches, len(cfg.CongestionLeaves))
}

// SizedFamilyScenario returns a fresh copy of a member of a sized held-out
// family, "H6x3-17", validated against FamilyConfig of its size. It
// generates the whole family each time (a millisecond), so it keeps no
// state. The built-in size's members are H1..H64 (FamilyScenario).
func SizedFamilyScenario(name string) (*Scenario, error) {
	s, l, n, ok := parseSizedName(name, FamilyPrefix)
	switch {
	case !ok:
		return nil, fmt.Errorf("sim: no held-out scenario %q, want H<switches>x<leaves>-<n> such as H6x3-1", name)
	case s == familySwitches && l == familyLeaves:
		return nil, fmt.Errorf("sim: no held-out scenario %q: the %dx%d family is %s1..%s%d", name, s, l, FamilyPrefix, FamilyPrefix, FamilySize)
	}
	shape, err := sizedFamily(s, l)
	if err != nil {
		return nil, err
	}
	if n < 1 || n > FamilySize || shape.prefix()+strconv.Itoa(n) != name {
		return nil, fmt.Errorf("sim: no held-out scenario %q, want %s1..%s%d", name, shape.prefix(), shape.prefix(), FamilySize)
	}
	return shape.member(n)
}

// sizedFamilyName reports whether name has the form of a sized family's
// member, prefix<digits>x… (H6x3-1, D6x3-1).
func sizedFamilyName(name, prefix string) bool {
	rest, ok := strings.CutPrefix(name, prefix)
	i := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
	return ok && i > 0 && rest[i] == 'x'
}

// LookupScenario returns a fresh copy of the scenario name: a built-in (see
// BuiltinScenario), a member of the held-out family (see FamilyScenario),
// of a sized held-out family (see SizedFamilyScenario) or of the held-out
// kinds family (see KindsFamilyScenario).
func LookupScenario(name string) (*Scenario, error) {
	if strings.HasPrefix(name, FamilyPrefix) {
		if _, err := strconv.Atoi(name[len(FamilyPrefix):]); err == nil {
			return FamilyScenario(name)
		}
		if sizedFamilyName(name, FamilyPrefix) {
			return SizedFamilyScenario(name)
		}
	}
	if lookup := kindsLookup(name); lookup != nil {
		return lookup(name)
	}
	for _, prefix := range []string{DevFamilyPrefix, SecondDevFamilyPrefix} {
		if rest, ok := strings.CutPrefix(name, prefix); ok {
			if _, err := strconv.Atoi(rest); err == nil || sizedFamilyName(name, prefix) {
				return DevFamilyScenario(name)
			}
		}
	}
	if _, err := BuiltinScenarioJSON(name); err != nil {
		return nil, fmt.Errorf("sim: no scenario %q, want a built-in (%s), a held-out one (%s1..%s%d, %s<S>x<L>-1..-%d, %s1..%s%d) or a development one (%s1..%s%d, %s1..%s%d, %s1..%s%d)", name, strings.Join(BuiltinScenarios(), " "), FamilyPrefix, FamilyPrefix, FamilySize, FamilyPrefix, FamilySize, KindsFamilyPrefix, KindsFamilyPrefix, KindsFamilySize, DevFamilyPrefix, DevFamilyPrefix, FamilySize, SecondDevFamilyPrefix, SecondDevFamilyPrefix, FamilySize, DevKindsFamilyPrefix, DevKindsFamilyPrefix, KindsFamilySize)
	}
	return BuiltinScenario(name)
}

// familyPattern is what kind of load a scenario's congesters offer.
type familyPattern int

const (
	patCrowd    familyPattern = iota // 2..5 full-rate hosts
	patElephant                      // one full-rate host
	patCapped                        // 2..5 hosts of rate-capped streams
	patMixture                       // full-rate hosts and capped hosts
	numPatterns
)

var patternNames = [...]string{"crowd", "elephant", "capped crowd", "mixture"}

// familyOverlap is how the congesters meet the protected flow's switch k*.
type familyOverlap int

const (
	ovFull    familyOverlap = iota // every congester starts on k*
	ovPartial                      // some start on k* or move onto it, some never touch it
	ovNone                         // none is ever on k*
	numOverlaps
)

var overlapNames = [...]string{"full", "partial", "no"}

// familyArrival is when the congesters arrive and leave.
type familyArrival int

const (
	arrTogether familyArrival = iota // all at congestion_start, to the end
	arrRamped                        // one after another (a lone host: late)
	arrRolling                       // together, then all move switch to switch (S6)
	arrBursts                        // leave and come back, 2 or 3 bursts
	arrBrief                         // one visit of at most familyBrief (N2)
	numArrivals
)

var arrivalNames = [...]string{"together", "ramped", "rolling", "bursts", "brief"}

// familyPlan is one cell of the family's design; the generator fills in
// hosts, streams and times at random.
type familyPlan struct {
	pattern   familyPattern
	overlap   familyOverlap
	arrival   familyArrival
	trap      bool // a full-rate elephant sits on another switch from t=0 (S12)
	trapAt    int  // with trap: index of the elephant's switch
	short     bool // bursts of at most familyBrief each
	protected int  // index of k*, the protected flow's switch
}

// familyMember is a generated scenario with what it was generated as.
type familyMember struct {
	plan familyPlan
	sc   *Scenario
	// elephants lists the switches (indexes) on which a lone full-rate
	// elephant host (pattern elephant, or a trap's) first sends.
	elephants []int
	// benign says that no full-rate congester sends on k* for longer
	// than familyBrief and capped load there is light: staying is right.
	benign bool
}

// familyPlans returns the family's design: FamilySize cells.
//
//   - 32: every pattern × arrival (together, ramped, rolling, bursts) ×
//     overlap full or partial;
//   - 8: no overlap, every pattern with two arrivals;
//   - 16: destination traps, every pattern × the four arrivals, overlap
//     full or partial alternately;
//   - 8: brief visits, every pattern with one brief visit (N2) or brief
//     bursts, full or partial overlap.
//
// The protected flow's switch is balanced within each group (in the traps
// together with the elephant's), and the cells are shuffled, so H numbers
// say nothing about the kind.
//
// At other sizes (familyShape) the protected flow's switch runs through
// the switches in turn over the whole design, traps included, so that
// every switch carries it 64/switches times (within one); the traps'
// pairs are described at trapPairs.
func familyPlans(r *rand.Rand, shape familyShape) []familyPlan {
	var groups [][]familyPlan
	var g []familyPlan
	for p := range numPatterns {
		for a := range arrBrief {
			for _, o := range []familyOverlap{ovFull, ovPartial} {
				g = append(g, familyPlan{pattern: p, arrival: a, overlap: o})
			}
		}
	}
	groups = append(groups, g)
	g = nil
	noOverlapArrivals := [numPatterns][2]familyArrival{
		patCrowd:    {arrTogether, arrRolling},
		patElephant: {arrRamped, arrBursts},
		patCapped:   {arrTogether, arrBursts},
		patMixture:  {arrRamped, arrRolling},
	}
	for p := range numPatterns {
		for _, a := range noOverlapArrivals[p] {
			g = append(g, familyPlan{pattern: p, arrival: a, overlap: ovNone})
		}
	}
	groups = append(groups, g)
	g = nil
	for p := range numPatterns {
		for a := range arrBrief {
			g = append(g, familyPlan{pattern: p, arrival: a, overlap: familyOverlap(int(p+familyPattern(a)) % 2), trap: true})
		}
	}
	groups = append(groups, g)
	g = nil
	for p := range numPatterns {
		for i, a := range []familyArrival{arrBrief, arrBursts} {
			g = append(g, familyPlan{pattern: p, arrival: a, overlap: familyOverlap((int(p) + i) % 2), short: true})
		}
	}
	groups = append(groups, g)

	var plans []familyPlan
	trapFrom, traps := 0, 0
	for _, g := range groups {
		pos := make([]int, len(g))
		for i := range pos {
			pos[i] = (len(plans) + i) % shape.switches
		}
		r.Shuffle(len(pos), func(i, j int) { pos[i], pos[j] = pos[j], pos[i] })
		for i := range g {
			g[i].protected = pos[i]
			if g[i].trap {
				if traps == 0 {
					trapFrom = len(plans) + i
				}
				traps++
			}
		}
		plans = append(plans, g...)
	}
	pairs := trapPairs(r, shape.switches, trapFrom, traps)
	for i := range plans {
		if plans[i].trap {
			plans[i].protected, plans[i].trapAt = pairs[0][0], pairs[0][1]
			pairs = pairs[1:]
		}
	}
	r.Shuffle(len(plans), func(i, j int) { plans[i], plans[j] = plans[j], plans[i] })
	return plans
}

// trapPairs returns n (k*, elephant) pairs of switches for the traps, the
// (from+i)-th cells of the design. On 4 switches (n = 16) they are all 12
// ordered pairs and the 4 of neighbours k*, k*+1, so that k* and the
// elephant take every switch 4 times and the elephant is below k* in 7
// traps, above in 9. On other numbers of switches (3 or more) k* continues
// the design's turn through the switches (from+i) and the elephants are
// the same switches shuffled, none on its own trap's k*.
func trapPairs(r *rand.Rand, switches, from, n int) [][2]int {
	var pairs [][2]int
	if switches == familySwitches {
		for k := range switches {
			for e := range switches {
				if e != k {
					pairs = append(pairs, [2]int{k, e})
				}
			}
		}
		for k := range switches {
			pairs = append(pairs, [2]int{k, (k + 1) % switches})
		}
		r.Shuffle(len(pairs), func(i, j int) { pairs[i], pairs[j] = pairs[j], pairs[i] })
		return pairs
	}
	ks := make([]int, n)
	for i := range ks {
		ks[i] = (from + i) % switches
	}
	es := slices.Clone(ks)
	r.Shuffle(len(es), func(i, j int) { es[i], es[j] = es[j], es[i] })
	// A switch fills at most ceil(n/3) places of each list, so at least
	// n - 2 ceil(n/3) > 0 places hold another switch in both: a partner j
	// to swap with always exists.
	for i := range es {
		if es[i] != ks[i] {
			continue
		}
		for j := range es {
			if es[j] != ks[i] && es[i] != ks[j] {
				es[i], es[j] = es[j], es[i]
				break
			}
		}
	}
	for i := range ks {
		pairs = append(pairs, [2]int{ks[i], es[i]})
	}
	return pairs
}

// corpusFamilySeed1 is the first PCG seed of every corpus draw
// ("Corpus" in ASCII), so that no draw replays the held-out, development or
// sized families, whose first seed is familySeed1.
const corpusFamilySeed1 = 0x436f72707573

// familyDrawAttempts bounds the redraws of DrawFamilyScenario; three first
// draws in 2,560 equal held-out traffic, so it is never reached in practice.
const familyDrawAttempts = 64

// DrawFamilyScenario returns one scenario of a family generated for the
// fabric cfg (two switches or more, Config.Validate) from seed by the
// held-out family's generator: the same design of FamilySize cells and
// the same builder as H1–H64 (package documentation, "Held-out family"),
// other random draws. cell picks the member (taken modulo FamilySize; the
// design is shuffled, so a cell index says nothing about the kind). It is
// for training corpora (the training package's strategy M_FAMILY): its
// first PCG seed is its own, and a draw whose traffic equals a held-out
// member's (H or K, or the sized family of cfg's size) is drawn again, so
// a corpus never holds a held-out scenario. On a fabric of two switches
// the design's destination traps lose their elephant (a trap needs a
// third switch). The scenario is validated against cfg.
func DrawFamilyScenario(cfg Config, seed uint64, cell int) (*Scenario, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("sim: family draw: %w", err)
	}
	s := familyShape{switches: cfg.Switches, leaves: len(cfg.CongestionLeaves), cfg: cfg, hosts: congesterHosts(cfg)}
	if len(s.hosts) < familyMinHosts {
		return nil, fmt.Errorf("sim: family draw: %d congester hosts, want at least %d (more congestion leaves)", len(s.hosts), familyMinHosts)
	}
	cell = ((cell % FamilySize) + FamilySize) % FamilySize
	heldOut := heldOutTraffic(cfg)
	for attempt := range uint64(familyDrawAttempts) {
		s.draw = &[2]uint64{corpusFamilySeed1, seed + attempt*0x9e3779b97f4a7c15}
		sc := s.generate()[cell].sc
		if heldOut[trafficKey(sc)] {
			continue
		}
		sc.Name = "draw-" + strconv.Itoa(cell+1)
		if err := sc.ValidateLimits(cfg, DefaultLimits()); err != nil {
			return nil, fmt.Errorf("sim: family draw %d of seed %#x: %w", cell+1, seed, err)
		}
		return sc, nil
	}
	return nil, fmt.Errorf("sim: family draw %d of seed %#x: %d draws all equal held-out traffic", cell+1, seed, familyDrawAttempts)
}

// congesterHosts returns the hosts of cfg's congestion leaves but the
// protected flow's ends and the sink: the hosts a family's congesters
// send from.
func congesterHosts(cfg Config) []string {
	var hosts []string
	for _, l := range cfg.CongestionLeaves {
		for j := range cfg.HostsPerLeaf {
			h := hostName(l*cfg.HostsPerLeaf + j)
			if h != cfg.ProtectedSrc && h != cfg.ProtectedDst && h != cfg.CongestionSink {
				hosts = append(hosts, h)
			}
		}
	}
	return hosts
}

// heldOutTraffic returns the traffic keys (trafficKey) of the held-out
// scenarios of cfg's size: H1–H64 and the congestion of K1–K64 at the
// built-in size, the sized family elsewhere (none below three switches).
// A corpus draw whose traffic equals one of them, which the small choice
// spaces of some cells allow by chance, is drawn again.
func heldOutTraffic(cfg Config) map[string]bool {
	keys := map[string]bool{}
	if cfg.Switches == familySwitches && len(cfg.CongestionLeaves) == familyLeaves {
		for _, m := range generateFamily() {
			keys[trafficKey(m.sc)] = true
		}
		for _, m := range generateKindsFamily() {
			keys[trafficKey(m.sc)] = true
		}
		return keys
	}
	if shape, err := sizedFamily(cfg.Switches, len(cfg.CongestionLeaves)); err == nil {
		for _, m := range shape.generate() {
			keys[trafficKey(m.sc)] = true
		}
	}
	return keys
}

// trafficKey identifies a scenario's traffic: the protected flow's switch
// and every congester entry.
func trafficKey(sc *Scenario) string {
	var b strings.Builder
	b.WriteString(sc.ProtectedSwitch)
	for _, c := range sc.Congesters {
		fmt.Fprintf(&b, "|%s>%s %d %v %d %d %s", c.Host, c.Dst, c.Streams, float64(c.StreamCap), c.Arrive, c.Depart, c.Switch)
		for _, mv := range c.Moves {
			fmt.Fprintf(&b, " %d>%s", mv.At, mv.Switch)
		}
	}
	return b.String()
}

// generateFamily builds the held-out family from its fixed seed: the same
// FamilySize members, in the same order, on every call.
func generateFamily() []familyMember { return builtinFamily().generate() }

// familyShape is the fabric a held-out family is generated for: its
// aggregation switches, congestion leaves and congester hosts.
type familyShape struct {
	switches, leaves int
	// cfg is the fabric its members are validated against (FamilyConfig).
	cfg Config
	// hosts are the congester hosts: the hosts of the congestion leaves
	// but the protected flow's and the sink (h2..h6 at the built-in size).
	hosts []string
	// dev selects a development family, its own seed and prefix:
	// heldOutFamily (0, H1..H64), devFirst (D1..D64) or devSecond
	// (E1..E64).
	dev int
	// draw, when set, replaces both seeds: a corpus draw (DrawFamilyScenario).
	draw *[2]uint64
}

// builtinFamily returns the shape of H1..H64: agg1..agg4, congesters
// h2..h6.
func builtinFamily() familyShape {
	s, _ := sizedFamily(familySwitches, familyLeaves)
	return s
}

// devFamily returns the shape of development family dev at the built-in
// size: D1..D64 (devFirst) or E1..E64 (devSecond).
func devFamily(dev int) familyShape {
	s := builtinFamily()
	s.dev = dev
	return s
}

// The families of one size, by familyShape.dev.
const (
	heldOutFamily = iota // H1..H64: the held-out family
	devFirst             // D1..D64: the development family
	devSecond            // E1..E64: the second development family
)

// familyPrefixes and familySeeds2 hold each family's name prefix and
// second PCG seed, by familyShape.dev.
var (
	familyPrefixes = [...]string{heldOutFamily: FamilyPrefix, devFirst: DevFamilyPrefix, devSecond: SecondDevFamilyPrefix}
	familySeeds2   = [...]uint64{heldOutFamily: familySeed2, devFirst: devFamilySeed2, devSecond: secondDevFamilySeed2}
)

// sizedFamily returns the family's shape for a fabric of that size:
// DefaultConfig resized by WithFabric (FamilyConfig).
func sizedFamily(switches, congestionLeaves int) (familyShape, error) {
	cfg, err := FamilyConfig(switches, congestionLeaves)
	if err != nil {
		return familyShape{}, err
	}
	s := familyShape{switches: switches, leaves: congestionLeaves, cfg: cfg, hosts: congesterHosts(cfg)}
	if switches < 3 {
		return familyShape{}, fmt.Errorf("sim: held-out family %dx%d: %d switches, want at least 3 (a trap's congesters need a switch besides the protected flow's and the elephant's)", switches, congestionLeaves, switches)
	}
	if len(s.hosts) < familyMinHosts {
		return familyShape{}, fmt.Errorf("sim: held-out family %dx%d: %d congester hosts, want at least %d (more congestion leaves)", switches, congestionLeaves, len(s.hosts), familyMinHosts)
	}
	return s, nil
}

// FamilyConfig returns the fabric the held-out family of that size is
// generated and validated for: DefaultConfig().WithFabric(switches,
// congestionLeaves). Every built-in profile has its shape.
func FamilyConfig(switches, congestionLeaves int) (Config, error) {
	return DefaultConfig().WithFabric(switches, congestionLeaves)
}

// builtin reports whether s is the built-in size, 4×3.
func (s familyShape) builtin() bool { return s.switches == familySwitches && s.leaves == familyLeaves }

// prefix returns the names' prefix: "H" at the built-in size, "H6x3-" at
// others; "D", "D6x3-", "E" and "E6x3-" for the development families.
func (s familyShape) prefix() string {
	p := familyPrefixes[s.dev]
	if s.builtin() {
		return p
	}
	return p + strconv.Itoa(s.switches) + "x" + strconv.Itoa(s.leaves) + "-"
}

// names returns the members' names in order: H1..H64 at the built-in
// size, H6x3-1..H6x3-64 at 6×3.
func (s familyShape) names() []string {
	names := make([]string, FamilySize)
	for i := range names {
		names[i] = s.prefix() + strconv.Itoa(i+1)
	}
	return names
}

// member returns a fresh copy of member n (1..FamilySize), validated
// against s.cfg. It generates the whole family each time (a millisecond at
// most), so it keeps no state.
func (s familyShape) member(n int) (*Scenario, error) {
	sc := s.generate()[n-1].sc
	if err := sc.ValidateLimits(s.cfg, DefaultLimits()); err != nil {
		return nil, fmt.Errorf("sim: held-out scenario %s: %w", sc.Name, err)
	}
	return sc, nil
}

// seeds returns the PCG seeds: the frozen ones at the built-in size, the
// second one mixed with the size at others; the development family's
// second seed is its own.
func (s familyShape) seeds() (uint64, uint64) {
	if s.draw != nil {
		return s.draw[0], s.draw[1]
	}
	seed2 := familySeeds2[s.dev]
	if s.builtin() {
		return familySeed1, seed2
	}
	return familySeed1, seed2 ^ uint64(s.switches)<<8 ^ uint64(s.leaves)
}

// generate builds the family of shape s from its seeds: the same
// FamilySize members, in the same order, on every call.
func (s familyShape) generate() []familyMember {
	r := rand.New(rand.NewPCG(s.seeds()))
	plans := familyPlans(r, s)
	if s.switches < 3 {
		// Only a corpus draw comes here (sizedFamily refuses two switches):
		// a trap needs a third switch for its decoys, so its cells keep
		// their pattern and arrival without the elephant.
		// A crowd rolling round the other switches only has no second
		// switch to roll to: it arrives together instead.
		for i := range plans {
			plans[i].trap = false
			if plans[i].overlap == ovNone && plans[i].arrival == arrRolling {
				plans[i].arrival = arrTogether
			}
		}
	}
	members := make([]familyMember, len(plans))
	for i, p := range plans {
		b := familyBuilder{r: r, plan: p, shape: s}
		members[i] = b.build(s.prefix() + strconv.Itoa(i+1))
	}
	return members
}

// familySender is one congester host of a generated scenario.
type familySender struct {
	host    string
	streams int
	cap     Rate // per stream; 0 means full rate
	onK     bool // its traffic meets k*
}

// familyBuilder turns one plan into a scenario, drawing the free choices
// (hosts, streams, caps, switches, times) from r.
type familyBuilder struct {
	r     *rand.Rand
	plan  familyPlan
	shape familyShape
	cgs   []Congester
	// trap is the trap elephant's switch, or -1; other avoids it.
	trap int
	// arrival describes the arrival pattern with its drawn times.
	arrival string
}

// The episode's times: congestion starts at familyStart and the episode
// ends at familyEnd (the defaults of Scenario).
const (
	familyStart = DefaultCongestionStart
	familyEnd   = DefaultCongestionStart + DefaultWindow
)

// pick returns one of xs at random.
func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

// secs returns s seconds.
func secs(s int) Duration { return Duration(time.Duration(s) * time.Second) }

// other returns a random switch other than k and the trap's.
func (b *familyBuilder) other(k int) int {
	var xs []int
	for i := range b.shape.switches {
		if i != k && i != b.trap {
			xs = append(xs, i)
		}
	}
	return pick(b.r, xs...)
}

func (b *familyBuilder) build(name string) familyMember {
	p, r, k := b.plan, b.r, b.plan.protected
	hosts := r.Perm(len(b.shape.hosts))
	host := func(i int) string { return b.shape.hosts[hosts[i]] }
	m := familyMember{plan: p}
	budget, avail, used := familyMaxEntries, len(hosts), 0
	b.trap = -1
	trapSwitch := -1
	if p.trap {
		trapSwitch = p.trapAt
		b.trap = trapSwitch
		b.cgs = append(b.cgs, Congester{Host: host(0), Streams: 8, Arrive: 0, Switch: switchName(trapSwitch)})
		m.elephants = append(m.elephants, trapSwitch)
		budget, avail, used = budget-1, avail-1, 1
	}
	bursts := 1
	switch {
	case p.arrival == arrBursts && p.short:
		bursts = pick(r, 2, 3)
	case p.arrival == arrBursts:
		bursts = pick(r, 2, 2, 3)
	}
	maxN := min(avail, budget/bursts)
	senders := b.senders(maxN)
	for i := range senders {
		senders[i].host = host(used + i)
	}
	used += len(senders)
	switch p.overlap {
	case ovFull:
		for i := range senders {
			senders[i].onK = true
		}
	case ovPartial:
		if len(senders) == 1 {
			senders[0].onK = true // it reaches k* by a move or a later burst
			break
		}
		on := 1 + r.IntN(len(senders)-1)
		for _, i := range r.Perm(len(senders))[:on] {
			senders[i].onK = true
		}
	}
	lone := len(senders) == 1 && p.overlap == ovPartial
	switch p.arrival {
	case arrTogether, arrRamped:
		b.steady(senders, lone)
	case arrRolling:
		b.rolling(senders)
	case arrBursts:
		b.bursts(senders, bursts, lone)
	case arrBrief:
		b.brief(senders, lone)
	}
	if p.pattern == patElephant {
		m.elephants = append(m.elephants, mustSwitchIndex(b.cgs[len(b.cgs)-len(senders)*bursts].Switch))
	}
	if p.trap {
		// S12's decoys: capped hosts on the remaining switches, so that
		// every candidate shows a flow count.
		free := []int{}
		for i := range b.shape.switches {
			if i != k && i != trapSwitch {
				free = append(free, i)
			}
		}
		for _, sw := range free {
			if used >= len(hosts) || len(b.cgs) >= familyMaxEntries {
				break
			}
			b.cgs = append(b.cgs, Congester{Host: host(used), Streams: 6, StreamCap: Rate(1e6 / 8), Arrive: secs(20), Switch: switchName(sw)})
			used++
		}
	}
	m.sc = &Scenario{
		Name:            name,
		ProtectedSwitch: switchName(k),
		CongestionStart: Duration(familyStart),
		Window:          Duration(DefaultWindow),
		Congesters:      b.cgs,
	}
	m.benign = familyBenign(m.sc)
	m.sc.Description = b.describe(m, senders, trapSwitch)
	return m
}

// mustSwitchIndex parses a switch name the generator wrote.
func mustSwitchIndex(name string) int {
	i, _ := strconv.Atoi(strings.TrimPrefix(name, "agg"))
	return i - 1
}

// senders draws the congester hosts of the plan's pattern, at most maxN
// of them (maxN >= 2), host names left empty.
func (b *familyBuilder) senders(maxN int) []familySender {
	r := b.r
	full := func() familySender { return familySender{streams: pick(r, 4, 6, 8, 8, 12)} }
	capped := func() familySender {
		return familySender{streams: pick(r, 4, 6, 8), cap: pick(r, Rate(500e3/8), Rate(1e6/8), Rate(1e6/8), Rate(2e6/8))}
	}
	var s []familySender
	switch b.plan.pattern {
	case patCrowd:
		for range 2 + r.IntN(maxN-1) {
			s = append(s, full())
		}
	case patElephant:
		s = append(s, familySender{streams: pick(r, 8, 12, 16)})
	case patCapped:
		for range 2 + r.IntN(maxN-1) {
			s = append(s, capped())
		}
	case patMixture:
		nf := 1 + r.IntN(min(2, maxN-1))
		nc := 1 + r.IntN(maxN-nf)
		for range nf {
			s = append(s, full())
		}
		for range nc {
			s = append(s, capped())
		}
	}
	return s
}

// entry returns a congester entry for s on switch sw from arrive to depart
// (0: the end).
func (s familySender) entry(sw int, arrive, depart Duration) Congester {
	return Congester{Host: s.host, Streams: s.streams, StreamCap: s.cap, Arrive: arrive, Depart: depart, Switch: switchName(sw)}
}

// steady places senders that arrive together or ramped and stay to the
// end. A lone partial sender arrives elsewhere and moves onto k* later.
func (b *familyBuilder) steady(senders []familySender, lone bool) {
	r, k := b.r, b.plan.protected
	gap := 0
	if b.plan.arrival == arrRamped {
		gap = pick(r, 5, 10, 15)
	}
	b.arrival = "arriving together at 20s"
	if gap > 0 {
		b.arrival = fmt.Sprintf("ramped arrival, one host every %ds from 20s", gap)
	}
	for i, s := range senders {
		at := 20 + i*gap
		if b.plan.arrival == arrRamped && len(senders) == 1 {
			at = 20 + pick(r, 10, 20, 30)
			b.arrival = fmt.Sprintf("ramped arrival: late, at %ds", at)
		}
		switch {
		case lone:
			c := s.entry(b.other(k), secs(at), 0)
			c.Moves = []Move{{At: secs(at + pick(r, 10, 20, 30, 40)), Switch: switchName(k)}}
			b.cgs = append(b.cgs, c)
		case s.onK:
			b.cgs = append(b.cgs, s.entry(k, secs(at), 0))
		default:
			b.cgs = append(b.cgs, s.entry(b.other(k), secs(at), 0))
		}
	}
}

// rolling places the senders together on one switch at congestion start
// and moves them all to the next switch every period (S6): from k* (full
// overlap), from another switch across k* (partial), or round the other
// switches only (none).
func (b *familyBuilder) rolling(senders []familySender) {
	r, k := b.r, b.plan.protected
	ring := make([]int, b.shape.switches)
	for i := range ring {
		ring[i] = i
	}
	if b.plan.overlap == ovNone {
		ring = slices.DeleteFunc(ring, func(i int) bool { return i == k })
	}
	if r.IntN(2) == 0 {
		slices.Reverse(ring)
	}
	start := slices.Index(ring, k)
	if b.plan.overlap != ovFull {
		start = r.IntN(len(ring))
		for ring[start] == k {
			start = r.IntN(len(ring))
		}
	}
	period := pick(r, 20, 25, 30, 40)
	b.arrival = fmt.Sprintf("rolling: arriving together at 20s on %s, all moving to the next switch every %ds", switchName(ring[start]), period)
	var moves []Move
	for i, at := 1, 20+period; secs(at) < Duration(familyEnd); i, at = i+1, at+period {
		moves = append(moves, Move{At: secs(at), Switch: switchName(ring[(start+i)%len(ring)])})
	}
	for _, s := range senders {
		c := s.entry(ring[start], secs(20), 0)
		c.Moves = slices.Clone(moves)
		b.cgs = append(b.cgs, c)
	}
}

// bursts sends every sender in n bursts that start together: each lasts
// on seconds and the next comes off seconds later. Senders not on k* keep
// one other switch; a lone partial sender alternates between another
// switch and k*.
func (b *familyBuilder) bursts(senders []familySender, n int, lone bool) {
	r, k := b.r, b.plan.protected
	on, off := pick(r, 10, 15, 20), pick(r, 10, 20, 30)
	if b.plan.short {
		on, off = pick(r, 3, 4, 5, 6), pick(r, 15, 25, 35)
	}
	b.arrival = fmt.Sprintf("in %d bursts of %ds, %ds apart, from 20s", n, on, off)
	for _, s := range senders {
		elsewhere := b.other(k)
		for j := range n {
			sw := elsewhere
			if s.onK && (!lone || j%2 == 1) {
				sw = k
			}
			at := 20 + j*(on+off)
			b.cgs = append(b.cgs, s.entry(sw, secs(at), secs(at+on)))
		}
	}
}

// brief sends every sender once for at most familyBrief (N2); a lone
// partial sender instead arrives elsewhere, visits k* briefly and returns.
func (b *familyBuilder) brief(senders []familySender, lone bool) {
	r, k := b.r, b.plan.protected
	stay := pick(r, 3, 4, 5, 6)
	b.arrival = fmt.Sprintf("brief: one visit of %ds", stay)
	for _, s := range senders {
		switch {
		case lone:
			from := b.other(k)
			at := 20 + pick(r, 10, 20, 30)
			c := s.entry(from, secs(20), 0)
			c.Moves = []Move{{At: secs(at), Switch: switchName(k)}, {At: secs(at + stay), Switch: switchName(from)}}
			b.cgs = append(b.cgs, c)
		case s.onK:
			b.cgs = append(b.cgs, s.entry(k, secs(20), secs(20+stay)))
		default:
			b.cgs = append(b.cgs, s.entry(b.other(k), secs(20), secs(20+stay)))
		}
	}
}

// interval is a period of time [from, to).
type interval struct{ from, to time.Duration }

// onSwitch returns the periods in which c sends through switch sw.
func onSwitch(c Congester, sw string) []interval {
	end := time.Duration(c.Depart)
	if end == 0 {
		end = familyEnd
	}
	var out []interval
	cur, from := c.Switch, time.Duration(c.Arrive)
	for _, mv := range c.Moves {
		if cur == sw {
			out = append(out, interval{from, time.Duration(mv.At)})
		}
		cur, from = mv.Switch, time.Duration(mv.At)
	}
	if cur == sw {
		out = append(out, interval{from, end})
	}
	return out
}

// familyLoad returns how long full-rate congesters send through the
// protected flow's switch in sc (the union of their periods) and the peak
// capped load there (the most that capped streams offer at one time).
func familyLoad(sc *Scenario) (full time.Duration, capped Rate) {
	var fulls []interval
	type cappedPeriod struct {
		interval
		rate Rate
	}
	var caps []cappedPeriod
	for _, c := range sc.Congesters {
		for _, iv := range onSwitch(c, sc.ProtectedSwitch) {
			if c.StreamCap == 0 {
				fulls = append(fulls, iv)
			} else {
				caps = append(caps, cappedPeriod{iv, c.StreamCap * Rate(c.Streams)})
			}
		}
	}
	slices.SortFunc(fulls, func(a, b interval) int { return cmp.Compare(a.from, b.from) })
	var reach time.Duration
	for _, iv := range fulls {
		if from := max(iv.from, reach); iv.to > from {
			full += iv.to - from
		}
		reach = max(reach, iv.to)
	}
	// The load peaks when some period starts.
	for _, p := range caps {
		var sum Rate
		for _, q := range caps {
			if q.from <= p.from && p.from < q.to {
				sum += q.rate
			}
		}
		capped = max(capped, sum)
	}
	return full, capped
}

// familyBenign reports whether staying on the protected flow's switch is
// right in sc by construction: full-rate congesters send there for at most
// familyBrief in all, and capped ones offer at most familyLightLoad there.
func familyBenign(sc *Scenario) bool {
	full, capped := familyLoad(sc)
	return full <= familyBrief && capped <= familyLightLoad
}

// describe writes the scenario's Description: the pattern, the overlap
// with the protected flow's switch, the arrival, the positions, and every
// congester entry.
func (b *familyBuilder) describe(m familyMember, senders []familySender, trapSwitch int) string {
	p := m.plan
	k := switchName(p.protected)
	var w strings.Builder
	nf, nc := 0, 0
	for _, s := range senders {
		if s.cap == 0 {
			nf++
		} else {
			nc++
		}
	}
	switch p.pattern {
	case patCrowd:
		fmt.Fprintf(&w, "Crowd of %d full-rate hosts", nf)
	case patElephant:
		fmt.Fprintf(&w, "Single full-rate elephant %s (%d streams, first on %s)", senders[0].host, senders[0].streams, switchName(m.elephants[len(m.elephants)-1]))
	case patCapped:
		fmt.Fprintf(&w, "Capped crowd of %d hosts", nc)
	case patMixture:
		fmt.Fprintf(&w, "Mixture of %s and %s", plural(nf, "full-rate host"), plural(nc, "capped host"))
	}
	fmt.Fprintf(&w, ", %s overlap with the protected flow's switch %s, %s.", overlapNames[p.overlap], k, b.arrival)
	if p.trap {
		rel := "above"
		if trapSwitch < p.protected {
			rel = "below"
		}
		lowest := "not the lowest-index candidate"
		if trapSwitch == 0 || trapSwitch == 1 && p.protected == 0 {
			lowest = "the lowest-index candidate"
		}
		fmt.Fprintf(&w, " Destination trap: a full-rate elephant on %s since 0s (%s %s in index order, %s).", switchName(trapSwitch), rel, k, lowest)
	}
	if m.benign {
		full, capped := familyLoad(m.sc)
		fullText := "no full-rate congester sends through " + k
		if full > 0 {
			fullText = fmt.Sprintf("full-rate congesters send through %s for %v in all", k, full)
		}
		cappedText := ""
		if capped > 0 {
			cappedText = fmt.Sprintf(" and capped ones offer at most %v there", capped)
		}
		fmt.Fprintf(&w, " Benign: %s%s, so staying should be right.", fullText, cappedText)
	}
	w.WriteString(" Congesters:")
	for i, c := range m.sc.Congesters {
		if i > 0 {
			w.WriteString(";")
		}
		rate := "full rate"
		if c.StreamCap != 0 {
			rate = "at " + c.StreamCap.String()
		}
		until := "end"
		if c.Depart != 0 {
			until = c.Depart.String()
		}
		fmt.Fprintf(&w, " %s %d streams %s on %s %v–%s", c.Host, c.Streams, rate, c.Switch, c.Arrive, until)
		for _, mv := range c.Moves {
			fmt.Fprintf(&w, ", %s at %v", mv.Switch, mv.At)
		}
	}
	w.WriteString(".")
	return w.String()
}

// plural writes n things.
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.Itoa(n) + " " + thing + "s"
}
