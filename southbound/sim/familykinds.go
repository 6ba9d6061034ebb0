package sim

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// The held-out kinds family (package documentation, "Held-out family"):
// KindsFamilySize scenarios K1..K64 whose protected flow is of the kind rr,
// rate or onoff, generated from a fixed PCG seed of its own. Most carry
// congestion drawn as the H family's is (the same builder); the others are
// demand-drop traps and slow capped ramps. Like H1..H64 it is a yardstick
// no profile, reward, gate or model choice may look at.
const (
	// KindsFamilySize is the number of scenarios in the kinds family.
	KindsFamilySize = 64
	// KindsFamilyPrefix starts every name of the kinds family: K1..K64.
	KindsFamilyPrefix = "K"

	// kindsSeed1 and kindsSeed2 seed the PCG generator ("ProFlow",
	// "KindsOut" in ASCII). Changing them changes the family, which the
	// freeze test forbids.
	kindsSeed1 = 0x50726f466c6f77
	kindsSeed2 = 0x4b696e64734f7574

	// DevKindsFamilyPrefix starts every name of the development kinds
	// family: J1..J64 (package documentation, "Development family").
	DevKindsFamilyPrefix = "J"
	// devKindsSeed2 replaces kindsSeed2 for the development kinds family
	// ("KindsDev" in ASCII).
	devKindsSeed2 = 0x4b696e6473446576

	// kindsTraps is the number of demand-drop traps (no congestion, the
	// flow's own demand falls), half rr and half onoff.
	kindsTraps = 6
	// kindsRamps is the number of slow capped ramps, half draining the
	// bucket and half stopping below C.
	kindsRamps = 6
)

// kindsClass is what a member of the kinds family tests.
type kindsClass int

const (
	kcCongestion kindsClass = iota // congestion drawn as in the H family
	kcTrap                         // no congestion; the flow's demand drops
	kcRampDrain                    // capped hosts ramp up on k* past C until the bucket drains
	kcRampShort                    // capped hosts ramp up on k* and stop below C
)

// kindsMember is a generated member of the kinds family with what it was
// generated as.
type kindsMember struct {
	class kindsClass
	// fm is the H-style member of a congestion scenario (its plan, benign
	// and elephants); nil for the other classes.
	fm *familyMember
	sc *Scenario
}

// KindsFamilyScenarios returns the names of the kinds family, K1..K64, in
// order. They are neither built-ins nor members of the H family.
func KindsFamilyScenarios() []string { return kindsNames(KindsFamilyPrefix) }

// DevKindsFamilyScenarios returns the names of the development kinds
// family, J1..J64, in order: the kinds family's generator and design drawn
// from another seed, which choices may look at (package documentation,
// "Development family").
func DevKindsFamilyScenarios() []string { return kindsNames(DevKindsFamilyPrefix) }

// kindsNames returns prefix1..prefix64.
func kindsNames(prefix string) []string {
	names := make([]string, KindsFamilySize)
	for i := range names {
		names[i] = prefix + strconv.Itoa(i+1)
	}
	return names
}

// KindsFamilyScenario returns a fresh copy of the kinds family's scenario
// name (K1..K64), validated against DefaultConfig. It generates the whole
// family each time, so it keeps no state.
func KindsFamilyScenario(name string) (*Scenario, error) {
	return kindsScenario(name, KindsFamilyPrefix, kindsSeed2, "held-out kinds")
}

// DevKindsFamilyScenario returns a fresh copy of the development kinds
// family's scenario name (J1..J64), validated against DefaultConfig.
func DevKindsFamilyScenario(name string) (*Scenario, error) {
	return kindsScenario(name, DevKindsFamilyPrefix, devKindsSeed2, "development kinds")
}

// kindsScenario returns member name of the kinds family with prefix and
// second seed seed2; what names the family in errors.
func kindsScenario(name, prefix string, seed2 uint64, what string) (*Scenario, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(name, prefix))
	if !strings.HasPrefix(name, prefix) || err != nil || n < 1 || n > KindsFamilySize || prefix+strconv.Itoa(n) != name {
		return nil, fmt.Errorf("sim: no %s scenario %q, want %s1..%s%d", what, name, prefix, prefix, KindsFamilySize)
	}
	sc := kindsFamilyFrom(prefix, seed2)[n-1].sc
	if err := sc.ValidateLimits(DefaultConfig(), DefaultLimits()); err != nil {
		return nil, fmt.Errorf("sim: %s scenario %s: %w", what, name, err)
	}
	return sc, nil
}

// generateKindsFamily builds the kinds family from its fixed seed: the
// same KindsFamilySize members, in the same order, on every call.
func generateKindsFamily() []kindsMember { return kindsFamilyFrom(KindsFamilyPrefix, kindsSeed2) }

// kindsFamilyFrom builds a kinds family, its members named prefix1..,
// from the PCG seeds kindsSeed1 and seed2.
//
// The design: kindsTraps demand-drop traps, kindsRamps slow capped ramps,
// and the rest congestion scenarios, the first cells of a shuffled H
// design (familyPlans) built by the H family's builder. The kinds are
// spread so that rr, rate and onoff each take about a third of the
// family: the traps are rr and onoff only (a rate flow's demand cannot
// change mid-episode), so the rate kind takes more of the others.
func kindsFamilyFrom(prefix string, seed2 uint64) []kindsMember {
	r := rand.New(rand.NewPCG(kindsSeed1, seed2))
	nCong := KindsFamilySize - kindsTraps - kindsRamps
	shape := builtinFamily()
	plans := familyPlans(r, shape)[:nCong]

	type cell struct {
		class kindsClass
		kind  string
		plan  familyPlan
		k     int // the protected flow's switch of a trap or ramp
	}
	var cells []cell
	// Congestion cells: kinds balanced over the whole family.
	kinds := kindsSpread(nCong)
	r.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
	for i, p := range plans {
		cells = append(cells, cell{class: kcCongestion, kind: kinds[i], plan: p})
	}
	var special []cell
	for i := range kindsTraps {
		special = append(special, cell{class: kcTrap, kind: []string{KindRR, KindOnOff}[i%2]})
	}
	for i := range kindsRamps {
		special = append(special, cell{class: []kindsClass{kcRampDrain, kcRampShort}[i%2], kind: []string{KindRR, KindRate, KindOnOff}[i/2]})
	}
	pos := make([]int, len(special))
	for i := range pos {
		pos[i] = i % familySwitches
	}
	r.Shuffle(len(pos), func(i, j int) { pos[i], pos[j] = pos[j], pos[i] })
	for i := range special {
		special[i].k = pos[i]
	}
	cells = append(cells, special...)
	r.Shuffle(len(cells), func(i, j int) { cells[i], cells[j] = cells[j], cells[i] })

	members := make([]kindsMember, len(cells))
	for i, c := range cells {
		name := prefix + strconv.Itoa(i+1)
		m := kindsMember{class: c.class}
		switch c.class {
		case kcCongestion:
			b := familyBuilder{r: r, plan: c.plan, shape: shape}
			fm := b.build(name)
			m.fm, m.sc = &fm, fm.sc
			m.sc.ProtectedKind = drawKind(r, c.kind)
			m.sc.Description = "Protected flow: " + kindPhrase(m.sc.ProtectedKind) + ". " + m.sc.Description
		case kcTrap:
			m.sc = demandDropTrap(r, name, c.kind, c.k)
		default:
			m.sc = slowRamp(r, name, drawKind(r, c.kind), c.k, c.class == kcRampDrain)
		}
		members[i] = m
	}
	return members
}

// kindsSpread returns n kinds for the congestion cells such that, with
// the traps' and ramps' kinds, rr, rate and onoff each take about a third
// of the family.
func kindsSpread(n int) []string {
	have := map[string]int{KindRR: kindsTraps/2 + kindsRamps/3, KindOnOff: kindsTraps - kindsTraps/2 + kindsRamps/3, KindRate: kindsRamps / 3}
	order := []string{KindRR, KindRate, KindOnOff}
	out := make([]string, 0, n)
	for range n {
		least := order[0]
		for _, k := range order[1:] {
			if have[k] < have[least] {
				least = k
			}
		}
		have[least]++
		out = append(out, least)
	}
	return out
}

// The ranges the kinds are drawn from (issue 21's space).
var (
	kindsRequestKiB  = []int{4, 8, 16, 32, 64}
	kindsRequestRate = []float64{20, 50, 100, 150, 200}
	kindsRateFrac    = []float64{0.2, 0.3, 0.4, 0.5, 0.6}
	kindsDuty        = []float64{0.3, 0.4, 0.5, 0.6, 0.7}
	kindsPeriodSecs  = []int{2, 4, 5, 6, 8, 10}
	// kindsBurstFrac is an onoff flow's burst rate as a fraction of C;
	// 0: as fast as TCP allows.
	kindsBurstFrac = []float64{0, 0, 0.4, 0.5, 0.6}
)

// drawKind draws a protected flow of kind: rr with requests of 4–64 KiB at
// 20–200 a second, periodic or Poisson; rate at 20–60% of C; onoff with a
// duty of 0.3–0.7 and a period of 2–10 s from the start of the window,
// bursting at full rate or at 40–60% of C.
func drawKind(r *rand.Rand, kind string) FlowKind {
	switch kind {
	case KindRR:
		return FlowKind{Kind: KindRR, RequestBytes: pick(r, kindsRequestKiB...) << 10, RequestRate: pick(r, kindsRequestRate...),
			Arrivals: pick(r, ArrivalsPeriodic, ArrivalsPoisson)}
	case KindRate:
		return FlowKind{Kind: KindRate, RateFraction: pick(r, kindsRateFrac...)}
	}
	return FlowKind{Kind: KindOnOff, Period: secs(pick(r, kindsPeriodSecs...)), Duty: pick(r, kindsDuty...),
		RateFraction: pick(r, kindsBurstFrac...), From: Duration(familyStart)}
}

// demandDropTrap returns a trap: no congester, the protected flow on
// switch k, and its demand falls 10–60 s into the window (rr: the request
// rate drops to a quarter to a tenth; onoff: from sending throughout to
// bursts of duty 0.3–0.7).
func demandDropTrap(r *rand.Rand, name, kind string, k int) *Scenario {
	at := secs(20 + pick(r, 10, 20, 30, 40, 50, 60))
	var fk FlowKind
	var drop string
	if kind == KindRR {
		fk = drawKind(r, KindRR)
		fk.RequestRate = pick(r, 100.0, 150, 200)
		fk.From, fk.RequestRateFrom = at, fk.RequestRate/pick(r, 4.0, 5, 10)
		drop = fmt.Sprintf("its request rate drops to %v a second", fk.RequestRateFrom)
	} else {
		fk = drawKind(r, KindOnOff)
		fk.From = at
		drop = "it turns to bursts"
	}
	return &Scenario{
		Name:            name,
		ProtectedSwitch: switchName(k),
		CongestionStart: Duration(familyStart),
		Window:          Duration(DefaultWindow),
		Congesters:      []Congester{},
		ProtectedKind:   fk,
		Description: fmt.Sprintf("Protected flow: %s. Demand-drop trap on the protected flow's switch %s: no congestion at all; at %v %s, so its throughput falls with no congester anywhere: no move is right.",
			kindPhrase(fk), switchName(k), at, drop),
	}
}

// The slow ramps' capped hosts: 8 streams each.
const kindsRampStreams = 8

// slowRamp returns a slow capped ramp on switch k for a flow of kind fk:
// capped hosts (8 streams each) arrive on k one after another. A draining
// ramp brings all five congester hosts at 12–16 Mbit/s a stream, 6–10 s
// apart, so that the load passes C early and exceeds it by at least
// 280 Mbit/s (35 MB/s) after the last arrival: the larger bucket of the
// built-in profiles (datacenter, 1.85 GB) runs dry well inside the window.
// A short ramp brings two or three hosts whose load, with the flow's
// demand (in frames), stays below 90% of C: the bucket never drains.
func slowRamp(r *rand.Rand, name string, fk FlowKind, k int, drain bool) *Scenario {
	cfg := DefaultConfig()
	gap := pick(r, 6, 8, 10)
	hosts := r.Perm(familyHosts)
	var n int
	var capBits float64 // per stream, bits/s
	if drain {
		n, capBits = familyHosts, pick(r, 12e6, 14e6, 16e6)
	} else {
		demand := fk.DemandRate(cfg) * cfg.PacketSize / cfg.MSS
		if fk.Kind == KindOnOff && fk.RateFraction == 0 {
			demand = cfg.BucketRate // a full-rate burst may reach C
		}
		if fk.Kind == KindOnOff {
			demand *= fk.Duty
		}
		// The largest whole Mbit/s a stream may offer, in frames, with n
		// hosts: at least 1 Mbit/s, with fewer hosts if need be.
		perStream := func(n int) float64 {
			room := (0.9*cfg.BucketRate - demand) * 8 / (float64(n*kindsRampStreams) * cfg.PacketSize / cfg.MSS)
			return float64(int(min(room, 12e6)/1e6)) * 1e6
		}
		n = pick(r, 2, 3)
		for n > 1 && perStream(n) < 1e6 {
			n--
		}
		capBits = max(perStream(n), 1e6)
	}
	var cgs []Congester
	var arrivals []string
	for i := range n {
		at := secs(20 + i*gap)
		cgs = append(cgs, Congester{Host: hostName(hosts[i] + 1), Streams: kindsRampStreams, StreamCap: Rate(capBits / 8), Arrive: at, Switch: switchName(k)})
		arrivals = append(arrivals, at.String())
	}
	sc := &Scenario{
		Name:            name,
		ProtectedSwitch: switchName(k),
		CongestionStart: Duration(familyStart),
		Window:          Duration(DefaultWindow),
		Congesters:      cgs,
		ProtectedKind:   fk,
	}
	total := Rate(float64(n*kindsRampStreams) * capBits / 8)
	what := "the load passes C and keeps rising, so the bucket drains slowly and runs dry inside the window: a move before then is right"
	if !drain {
		what = "with the flow's demand the load stays below C, so the bucket never drains: no move is right"
	}
	sc.Description = fmt.Sprintf("Protected flow: %s. Slow capped ramp on the protected flow's switch %s: %s of %d streams at %v arrive on %s one after another (at %s), %v in all; %s.",
		kindPhrase(fk), switchName(k), plural(n, "host"), kindsRampStreams, Rate(capBits/8), switchName(k), strings.Join(arrivals, ", "), total, what)
	return sc
}

// kindPhrase describes a protected flow's kind in words.
func kindPhrase(k FlowKind) string {
	switch k.Kind {
	case KindRR:
		arr := "periodic"
		if k.Arrivals == ArrivalsPoisson {
			arr = "Poisson"
		}
		s := fmt.Sprintf("request/response, %d KiB requests %v a second (%s)", k.RequestBytes>>10, k.RequestRate, arr)
		if k.RequestRateFrom > 0 {
			s += fmt.Sprintf(", %v a second from %v", k.RequestRateFrom, k.From)
		}
		return s
	case KindRate:
		return fmt.Sprintf("constant bitrate at %v%% of C", k.RateFraction*100)
	}
	rate := "at full rate"
	if k.RateFraction > 0 {
		rate = fmt.Sprintf("at %v%% of C", k.RateFraction*100)
	}
	return fmt.Sprintf("on/off, bursts %s for %v of every %v from %v (before then sending throughout)", rate, k.Duty, k.Period, k.From)
}

// kindsLookup is LookupScenario's case for the kinds families: the
// lookup of the held-out (K) or the development (J) kinds family when
// name has its prefix and a number, else nil.
func kindsLookup(name string) func(string) (*Scenario, error) {
	for _, f := range [...]struct {
		prefix string
		lookup func(string) (*Scenario, error)
	}{{KindsFamilyPrefix, KindsFamilyScenario}, {DevKindsFamilyPrefix, DevKindsFamilyScenario}} {
		if rest, ok := strings.CutPrefix(name, f.prefix); ok {
			if _, err := strconv.Atoi(rest); err == nil {
				return f.lookup
			}
		}
	}
	return nil
}
