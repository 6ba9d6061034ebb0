package sim

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var updateFamily = flag.Bool("update-family", false, "rewrite testdata/family and docs/heldout-family.md from the generator (never after the freeze)")

// familyDigest is the SHA-256 of familyJSON: the held-out family as frozen
// by the commit that set it (package documentation, "Held-out family").
// A test failing here means the family changed; the family must not
// change, so fix the change, not this constant.
const familyDigest = "588cc15973cea0d4ca8298959355a1384ac2ecb557f70c9702690a245e6f4c7e"

// familyJSON returns the canonical JSON text of every member, in order, as
// the files under testdata/family hold it.
func familyJSON(t *testing.T) [][]byte {
	t.Helper()
	var out [][]byte
	for _, m := range generateFamily() {
		b, err := json.MarshalIndent(m.sc, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, append(b, '\n'))
	}
	return out
}

func TestFamilyFrozen(t *testing.T) {
	h := sha256.New()
	for _, b := range familyJSON(t) {
		h.Write(b)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != familyDigest {
		t.Fatalf("held-out family digest %s, want %s: the frozen family changed", got, familyDigest)
	}
}

func TestFamilyNames(t *testing.T) {
	names := FamilyScenarios()
	if len(names) != FamilySize || FamilySize < 60 {
		t.Fatalf("%d family scenarios, want FamilySize = %d >= 60", len(names), FamilySize)
	}
	for i, n := range names {
		if want := "H" + strconv.Itoa(i+1); n != want {
			t.Errorf("FamilyScenarios()[%d] = %s, want %s", i, n, want)
		}
	}
	if !slices.IsSortedFunc(names, compareScenarioNames) {
		t.Errorf("FamilyScenarios() = %v, not in compareScenarioNames order", names)
	}
	builtins := BuiltinScenarios()
	for _, n := range builtins {
		if strings.HasPrefix(n, FamilyPrefix) {
			t.Errorf("built-in %s has the family's prefix %s", n, FamilyPrefix)
		}
	}
	if _, err := BuiltinScenario("H1"); err == nil {
		t.Error("BuiltinScenario(H1) found a family member, want built-ins only")
	}
}

func TestFamilyScenarioValid(t *testing.T) {
	cfg := DefaultConfig()
	for _, n := range FamilyScenarios() {
		sc, err := FamilyScenario(n)
		if err != nil {
			t.Fatal(err)
		}
		if sc.Name != n {
			t.Errorf("FamilyScenario(%s).Name = %s", n, sc.Name)
		}
		if err := sc.ValidateLimits(cfg, DefaultLimits()); err != nil {
			t.Error(err)
		}
		if !strings.Contains(sc.Description, "protected flow's switch "+sc.ProtectedSwitch) {
			t.Errorf("%s: description %q does not name the protected flow's switch %s", n, sc.Description, sc.ProtectedSwitch)
		}
		look, err := LookupScenario(n)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(sc, look); diff != "" {
			t.Errorf("LookupScenario(%s) differs from FamilyScenario (-want +got):\n%s", n, diff)
		}
	}
	// Fresh copies: changing one leaves the next call alone.
	a, _ := FamilyScenario("H1")
	a.Congesters[0].Host = "h9"
	if b, _ := FamilyScenario("H1"); b.Congesters[0].Host == "h9" {
		t.Error("FamilyScenario(H1) returned shared state")
	}
}

func TestFamilyScenarioErrors(t *testing.T) {
	for _, n := range []string{"H0", "H65", "H01", "h1", "H", "Hx", "S1"} {
		_, err := FamilyScenario(n)
		if err == nil || !strings.Contains(err.Error(), strconv.Quote(n)) || !strings.Contains(err.Error(), "H1..H64") {
			t.Errorf("FamilyScenario(%q) = %v, want an error naming it and H1..H64", n, err)
		}
	}
	if _, err := LookupScenario("S12"); err != nil {
		t.Errorf("LookupScenario(S12): %v", err)
	}
	for _, n := range []string{"H65", "S99", "quiet"} {
		if _, err := LookupScenario(n); err == nil || !strings.Contains(err.Error(), strconv.Quote(n)) {
			t.Errorf("LookupScenario(%q) = %v, want an error naming it", n, err)
		}
	}
}

func TestFamilyDeterministic(t *testing.T) {
	a, b := familyJSON(t), familyJSON(t)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Fatalf("two generations differ:\n%s", diff)
	}
}

// The family covers the space it promises (package documentation,
// "Held-out family").
func TestFamilyCoverage(t *testing.T) {
	members := generateFamily()
	count := func(f func(familyMember) bool) int {
		n := 0
		for _, m := range members {
			if f(m) {
				n++
			}
		}
		return n
	}
	for n := 1; n <= familyMaxEntries; n++ {
		if c := count(func(m familyMember) bool { return len(m.sc.Congesters) == n }); c == 0 {
			t.Errorf("no scenario with %d congester entries", n)
		}
	}
	for p := range numPatterns {
		if c := count(func(m familyMember) bool { return m.plan.pattern == p }); c < 8 {
			t.Errorf("%d scenarios of pattern %s, want at least 8", c, patternNames[p])
		}
	}
	for o := range numOverlaps {
		if c := count(func(m familyMember) bool { return m.plan.overlap == o }); c < 8 {
			t.Errorf("%d scenarios with %s overlap, want at least 8", c, overlapNames[o])
		}
	}
	for a := range numArrivals {
		if c := count(func(m familyMember) bool { return m.plan.arrival == a }); c < 4 {
			t.Errorf("%d scenarios with %s arrival, want at least 4", c, arrivalNames[a])
		}
	}
	for k := range familySwitches {
		sw := switchName(k)
		if c := count(func(m familyMember) bool { return m.sc.ProtectedSwitch == sw }); c != FamilySize/familySwitches {
			t.Errorf("protected flow on %s in %d scenarios, want %d", sw, c, FamilySize/familySwitches)
		}
		if c := count(func(m familyMember) bool { return slices.Contains(m.elephants, k) }); c < 4 {
			t.Errorf("an elephant on %s in %d scenarios, want at least 4", sw, c)
		}
	}
	below := count(func(m familyMember) bool { return m.plan.trap && m.elephants[0] < m.plan.protected })
	above := count(func(m familyMember) bool { return m.plan.trap && m.elephants[0] > m.plan.protected })
	if below < 4 || above < 4 {
		t.Errorf("destination traps: %d with the elephant below the protected flow's switch, %d above, want at least 4 each", below, above)
	}
	if c := count(func(m familyMember) bool { return m.benign }); c < 12 || c > FamilySize/2 {
		t.Errorf("%d benign scenarios, want 12..%d", c, FamilySize/2)
	}
	if c := count(func(m familyMember) bool { return m.plan.overlap == ovNone && !m.benign }); c != 0 {
		t.Errorf("%d scenarios without overlap are not benign, want 0", c)
	}
	// Every member's facts match its description's words.
	for _, m := range members {
		d := m.sc.Description
		for _, w := range []string{overlapNames[m.plan.overlap] + " overlap", m.sc.ProtectedSwitch} {
			if !strings.Contains(d, w) {
				t.Errorf("%s: description %q lacks %q", m.sc.Name, d, w)
			}
		}
		if strings.Contains(d, "Benign") != m.benign || strings.Contains(d, "Destination trap") != m.plan.trap {
			t.Errorf("%s: description %q disagrees with benign %v, trap %v", m.sc.Name, d, m.benign, m.plan.trap)
		}
	}
}

// familyTable writes the reviewers' table of the family.
func familyTable() []byte {
	var b bytes.Buffer
	b.WriteString("# The held-out scenario family\n\n")
	b.WriteString("Generated by `southbound/sim/family.go` (package documentation of `southbound/sim`, \"Held-out family\"); ")
	b.WriteString("the JSON of every scenario is in `southbound/sim/testdata/family/`. Written by ")
	b.WriteString("`go test ./southbound/sim/ -run FamilyFiles -update-family`; the family is frozen: ")
	b.WriteString("no profile, reward, gate or model choice may look at it.\n\n")
	b.WriteString("| name | protected switch | entries | description |\n|---|---|---|---|\n")
	for _, m := range generateFamily() {
		fmt.Fprintf(&b, "| %s | %s | %d | %s |\n", m.sc.Name, m.sc.ProtectedSwitch, len(m.sc.Congesters), m.sc.Description)
	}
	b.WriteString("\n## Families of other sizes\n\n")
	b.WriteString("A fabric of S aggregation switches and L congestion leaves other than 4×3 (`sim.Config.WithFabric`) has a family of its own, ")
	b.WriteString("`H<S>x<L>-1` … `H<S>x<L>-64` (`H6x3-1`, `H16x3-64`, `H8x7-5`; `sim.SizedFamilyScenarios`): the same generator and the same 64 design cells ")
	b.WriteString("(pattern, overlap, arrival, trap, brief visit) from a seed mixed with the size, the protected flow on every switch in turn, ")
	b.WriteString("the traps' elephants shuffled over the same switches, congesters drawn from every host of the congestion leaves but the protected flow's source ")
	b.WriteString("(h2–h6 at L = 3, h2–h14 at L = 7), 1 to 8 entries. A size needs 3 or more switches and 3 or more congester hosts. ")
	b.WriteString("`proflow evaluate -scenarios heldout` runs the family of the profile's size (`-fabric 16x3` or `-profile testbed-16x3`); ")
	b.WriteString("`-scenarios H6x3-1,H6x3-7` and the range `H6x3-1-H6x3-64` name members. ")
	b.WriteString("They are generated, not stored; the same rule as for H1–H64 holds: no profile, reward, gate or model choice may look at them.\n")
	return b.Bytes()
}

// The committed files equal the generator's output, and read back as the
// scenarios the generator builds.
func TestFamilyFiles(t *testing.T) {
	dir := filepath.Join("testdata", "family")
	table := filepath.Join("..", "..", "docs", "heldout-family.md")
	files := familyJSON(t)
	if *updateFamily {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for i, b := range files {
			if err := os.WriteFile(filepath.Join(dir, FamilyScenarios()[i]+".json"), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(table, familyTable(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != FamilySize {
		t.Errorf("%d files in %s, want %d", len(entries), dir, FamilySize)
	}
	for i, n := range FamilyScenarios() {
		path := filepath.Join(dir, n+".json")
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, files[i]) {
			t.Errorf("%s differs from the generator's output (-update-family rewrites it, but the family is frozen):\n%s", path, cmp.Diff(string(files[i]), string(got)))
			continue
		}
		sc, err := LoadScenario(path, DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		want, _ := FamilyScenario(n)
		if diff := cmp.Diff(want, sc); diff != "" {
			t.Errorf("%s does not read back as %s (-want +got):\n%s", path, n, diff)
		}
	}
	got, err := os.ReadFile(table)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, familyTable()) {
		t.Errorf("%s differs from the generator's output (-update-family rewrites it)", table)
	}
}
