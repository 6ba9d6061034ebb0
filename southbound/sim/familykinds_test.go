package sim

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// kindsFamilyDigest is the SHA-256 of the kinds family's JSON, every
// member's json.MarshalIndent(sc, "", "  ") and a newline, in order: the
// family as frozen by commit db57b02 (package documentation, "Held-out
// family"). A test failing here means the family changed; it
// must not change, so fix the change, not this constant.
const kindsFamilyDigest = "277c3b9d7b250c6b4aea34c21e978ddc4095139828db3f901b5d344dfd6589b9"

func kindsFamilyJSON(t *testing.T) [][]byte {
	t.Helper()
	var out [][]byte
	for _, m := range generateKindsFamily() {
		b, err := json.MarshalIndent(m.sc, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, append(b, '\n'))
	}
	return out
}

func TestKindsFamilyFrozen(t *testing.T) {
	h := sha256.New()
	for _, b := range kindsFamilyJSON(t) {
		h.Write(b)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != kindsFamilyDigest {
		t.Fatalf("held-out kinds family digest %s, want %s: the frozen family changed", got, kindsFamilyDigest)
	}
}

func TestKindsFamilyDeterministic(t *testing.T) {
	if diff := cmp.Diff(kindsFamilyJSON(t), kindsFamilyJSON(t)); diff != "" {
		t.Fatalf("two generations differ:\n%s", diff)
	}
}

func TestKindsFamilyNames(t *testing.T) {
	names := KindsFamilyScenarios()
	if len(names) != KindsFamilySize || KindsFamilySize != 64 {
		t.Fatalf("%d kinds family scenarios, want 64", len(names))
	}
	for i, n := range names {
		if want := "K" + strconv.Itoa(i+1); n != want {
			t.Errorf("KindsFamilyScenarios()[%d] = %s, want %s", i, n, want)
		}
	}
	for _, n := range BuiltinScenarios() {
		if strings.HasPrefix(n, KindsFamilyPrefix) {
			t.Errorf("built-in %s has the kinds family's prefix %s", n, KindsFamilyPrefix)
		}
	}
	for _, n := range []string{"K0", "K65", "K01", "k1", "Kx", "H1"} {
		_, err := KindsFamilyScenario(n)
		if err == nil || !strings.Contains(err.Error(), strconv.Quote(n)) || !strings.Contains(err.Error(), "K1..K64") {
			t.Errorf("KindsFamilyScenario(%q) = %v, want an error naming it and K1..K64", n, err)
		}
	}
	if _, err := LookupScenario("K65"); err == nil || !strings.Contains(err.Error(), "K1..K64") {
		t.Errorf("LookupScenario(K65) = %v, want an error naming K1..K64", err)
	}
	if _, err := LookupScenario("S99"); err == nil || !strings.Contains(err.Error(), "K1..K64") {
		t.Errorf("LookupScenario(S99) = %v, want an error naming the held-out families", err)
	}
}

// Every member is valid, named, not bulk, found by LookupScenario, and a
// fresh copy each time.
func TestKindsFamilyValid(t *testing.T) {
	cfg := DefaultConfig()
	for _, n := range KindsFamilyScenarios() {
		sc, err := KindsFamilyScenario(n)
		if err != nil {
			t.Fatal(err)
		}
		if sc.Name != n || sc.ProtectedKind.IsBulk() {
			t.Errorf("%s: name %s, kind %+v; want its name and a kind other than bulk", n, sc.Name, sc.ProtectedKind)
		}
		for _, c := range []Config{cfg, TestbedConfig()} {
			if err := sc.ValidateLimits(c, DefaultLimits()); err != nil {
				t.Errorf("%s on %s: %v", n, c.Name, err)
			}
		}
		look, err := LookupScenario(n)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(sc, look); diff != "" {
			t.Errorf("LookupScenario(%s) differs from KindsFamilyScenario (-want +got):\n%s", n, diff)
		}
		if !strings.HasPrefix(sc.Description, "Protected flow: "+kindPhrase(sc.ProtectedKind)+". ") || !strings.Contains(sc.Description, "protected flow's switch "+sc.ProtectedSwitch) {
			t.Errorf("%s: description %q does not start with its kind or name its switch %s", n, sc.Description, sc.ProtectedSwitch)
		}
	}
	a, _ := KindsFamilyScenario("K1")
	a.ProtectedKind.Kind = "changed"
	if b, _ := KindsFamilyScenario("K1"); b.ProtectedKind.Kind == "changed" {
		t.Error("KindsFamilyScenario(K1) returned shared state")
	}
}

// The family covers the space it promises (package documentation,
// "Held-out family").
func TestKindsFamilyCoverage(t *testing.T) {
	cfg := DefaultConfig()
	members := generateKindsFamily()
	count := func(f func(kindsMember) bool) int {
		n := 0
		for _, m := range members {
			if f(m) {
				n++
			}
		}
		return n
	}
	for _, k := range []string{KindRR, KindRate, KindOnOff} {
		if c := count(func(m kindsMember) bool { return m.sc.ProtectedKind.Kind == k }); c < 19 || c > 24 {
			t.Errorf("%d members of kind %s, want about a third (19..24)", c, k)
		}
	}
	for k := range familySwitches {
		sw := switchName(k)
		if c := count(func(m kindsMember) bool { return m.sc.ProtectedSwitch == sw }); c < 10 {
			t.Errorf("protected flow on %s in %d members, want at least 10", sw, c)
		}
	}
	for class, want := range map[kindsClass]int{kcTrap: kindsTraps, kcRampDrain: kindsRamps / 2, kcRampShort: kindsRamps / 2, kcCongestion: KindsFamilySize - kindsTraps - kindsRamps} {
		if c := count(func(m kindsMember) bool { return m.class == class }); c != want {
			t.Errorf("%d members of class %d, want %d", c, class, want)
		}
	}
	if kindsTraps < 6 || kindsRamps < 6 {
		t.Errorf("%d traps and %d ramps, want about 10%% of %d each", kindsTraps, kindsRamps, KindsFamilySize)
	}
	for p := range numPatterns {
		if c := count(func(m kindsMember) bool { return m.fm != nil && m.fm.plan.pattern == p }); c < 6 {
			t.Errorf("%d members of pattern %s, want at least 6", c, patternNames[p])
		}
	}
	for o := range numOverlaps {
		if c := count(func(m kindsMember) bool { return m.fm != nil && m.fm.plan.overlap == o }); c < 4 {
			t.Errorf("%d members with %s overlap, want at least 4", c, overlapNames[o])
		}
	}
	for a := range numArrivals {
		if c := count(func(m kindsMember) bool { return m.fm != nil && m.fm.plan.arrival == a }); c < 3 {
			t.Errorf("%d members with %s arrival, want at least 3", c, arrivalNames[a])
		}
	}
	for _, m := range members {
		k, n := m.sc.ProtectedKind, m.sc.Name
		switch k.Kind {
		case KindRR:
			if kib := k.RequestBytes >> 10; kib < 4 || kib > 64 || k.RequestBytes%1024 != 0 || k.RequestRate < 20 || k.RequestRate > 200 {
				t.Errorf("%s: rr %+v, want 4–64 KiB requests at 20–200 a second", n, k)
			}
		case KindRate:
			if k.RateFraction < 0.2 || k.RateFraction > 0.6 {
				t.Errorf("%s: rate %+v, want 20–60%% of C", n, k)
			}
		case KindOnOff:
			if p := time.Duration(k.Period); k.Duty < 0.3 || k.Duty > 0.7 || p < 2*time.Second || p > 10*time.Second {
				t.Errorf("%s: onoff %+v, want a duty of 0.3–0.7 and a period of 2–10 s", n, k)
			}
		}
		switch m.class {
		case kcTrap:
			drops := k.Kind == KindRR && k.RequestRateFrom > 0 && k.RequestRateFrom < k.RequestRate || k.Kind == KindOnOff && k.From > Duration(familyStart)
			if len(m.sc.Congesters) != 0 || !drops || !strings.Contains(m.sc.Description, "no move is right") {
				t.Errorf("%s: trap with %d congesters, kind %+v; want none and a demand that drops in the window", n, len(m.sc.Congesters), k)
			}
		case kcRampDrain, kcRampShort:
			var load float64 // bytes/s in frames, all hosts arrived
			for i, c := range m.sc.Congesters {
				if c.Switch != m.sc.ProtectedSwitch || c.StreamCap == 0 || (i > 0 && c.Arrive <= m.sc.Congesters[i-1].Arrive) {
					t.Errorf("%s: ramp entry %+v, want capped hosts arriving one after another on %s", n, c, m.sc.ProtectedSwitch)
				}
				load += float64(c.Streams) * float64(c.StreamCap) * cfg.PacketSize / cfg.MSS
			}
			demand := k.DemandRate(cfg) * cfg.PacketSize / cfg.MSS
			if k.Kind == KindOnOff {
				if k.RateFraction == 0 {
					demand = cfg.BucketRate
				}
				demand *= k.Duty
			}
			if m.class == kcRampShort && load+demand >= cfg.BucketRate {
				t.Errorf("%s: short ramp offers %v B/s with the flow's %v, want below C = %v", n, load, demand, cfg.BucketRate)
			}
			if m.class == kcRampDrain {
				last := time.Duration(m.sc.Congesters[len(m.sc.Congesters)-1].Arrive)
				dry := last + time.Duration(cfg.BucketBurst/(load-cfg.BucketRate)*float64(time.Second))
				if load-cfg.BucketRate < 35e6 || dry > familyEnd-20*time.Second {
					t.Errorf("%s: draining ramp %v B/s over C from %v, the bucket dry by %v; want 35 MB/s over C and dry 20 s before the end at the latest", n, load-cfg.BucketRate, last, dry)
				}
			}
		case kcCongestion:
			if m.fm == nil || len(m.sc.Congesters) == 0 {
				t.Errorf("%s: congestion member without congesters", n)
			}
		}
	}
	if !slices.IsSortedFunc(KindsFamilyScenarios(), compareScenarioNames) {
		t.Error("KindsFamilyScenarios() not in compareScenarioNames order")
	}
}

// The development kinds family is the kinds family's design drawn from
// its own seed: the same classes (traps, ramps, congestion) and kinds in
// the same proportions, other draws, and never a K member's traffic.
func TestDevKindsFamily(t *testing.T) {
	names := DevKindsFamilyScenarios()
	if len(names) != KindsFamilySize {
		t.Fatalf("%d development kinds scenarios, want %d", len(names), KindsFamilySize)
	}
	for _, n := range BuiltinScenarios() {
		if strings.HasPrefix(n, DevKindsFamilyPrefix) {
			t.Errorf("built-in %s has the development kinds family's prefix %s", n, DevKindsFamilyPrefix)
		}
	}
	held, dev := generateKindsFamily(), kindsFamilyFrom(DevKindsFamilyPrefix, devKindsSeed2)
	census := func(ms []kindsMember) map[string]int {
		c := map[string]int{}
		for _, m := range ms {
			c[strconv.Itoa(int(m.class))+"/"+m.sc.ProtectedKind.Kind]++
		}
		return c
	}
	if diff := cmp.Diff(census(held), census(dev)); diff != "" {
		t.Errorf("the development kinds family's classes and kinds differ from K's (-K +J):\n%s", diff)
	}
	cfg := DefaultConfig()
	for i, n := range names {
		if want := DevKindsFamilyPrefix + strconv.Itoa(i+1); n != want {
			t.Errorf("DevKindsFamilyScenarios()[%d] = %s, want %s", i, n, want)
		}
		sc, err := LookupScenario(n)
		if err != nil {
			t.Fatalf("LookupScenario(%s): %v", n, err)
		}
		if sc.Name != n {
			t.Errorf("LookupScenario(%s) named %s", n, sc.Name)
		}
		if err := sc.ValidateLimits(cfg, DefaultLimits()); err != nil {
			t.Errorf("%s: %v", n, err)
		}
		for _, h := range held {
			if cmp.Equal(h.sc.Congesters, sc.Congesters) && h.sc.ProtectedSwitch == sc.ProtectedSwitch && len(sc.Congesters) > 0 {
				t.Errorf("%s has the traffic of held-out %s", n, h.sc.Name)
			}
		}
	}
	for _, n := range []string{"J0", "J65", "J01", "j1"} {
		if _, err := DevKindsFamilyScenario(n); err == nil || !strings.Contains(err.Error(), strconv.Quote(n)) || !strings.Contains(err.Error(), "J1..J64") {
			t.Errorf("DevKindsFamilyScenario(%q) = %v, want an error naming it and J1..J64", n, err)
		}
	}
	if _, err := LookupScenario("J65"); err == nil {
		t.Error("LookupScenario(J65) succeeded, want an error")
	}
}
