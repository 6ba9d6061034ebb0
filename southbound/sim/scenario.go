package sim

import (
	"bytes"
	"cmp"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/internal/fileutil"
)

// Scenario is an episode's traffic: where the protected flow starts and
// which congester hosts send, from where, through which aggregation switch,
// with how many streams, and when they arrive, move and leave. It is data:
// the built-in scenarios of the paper (S1–S12, C1, C2) are JSON files
// embedded in the package, and users write their own in the same schema
// (see the package documentation for an example).
//
// Every time is an offset from the start of the episode, when the protected
// flow starts alone. The evaluation window is [CongestionStart,
// CongestionStart+Window]; congestion normally arrives at CongestionStart.
type Scenario struct {
	// Name identifies the scenario in errors and traces.
	Name string `json:"name"`
	// Description says what the scenario tests.
	Description string `json:"description,omitempty"`
	// ProtectedSwitch names the aggregation switch carrying the protected
	// flow at the start (its ECMP placement). With a Protected list it may
	// be left empty; if set, it must name Protected[0]'s switch.
	ProtectedSwitch string `json:"protected_switch"`
	// CongestionStart is when the evaluation window opens (default 20 s:
	// TCP ramp-up and the controller's baseline phase come first).
	CongestionStart Duration `json:"congestion_start,omitempty"`
	// Window is the length of the evaluation window (default 120 s).
	Window Duration `json:"window,omitempty"`
	// Congesters are the congestion sources.
	Congesters []Congester `json:"congesters"`
	// Protected, when not empty, lists several protected flows (the
	// many-flow extension; see the package documentation), the first of
	// them the primary flow that Fabric.Flow returns. When empty the
	// fabric carries the single protected flow f_p of the Config
	// (Config.ProtectedSrc to Config.ProtectedDst) on ProtectedSwitch.
	Protected []Protected `json:"protected,omitempty"`
	// ProtectedKind is the kind of traffic f_p carries (package
	// documentation, "Protected-flow kinds"); the zero value, and an
	// absent protected_kind, is a bulk transfer. With a Protected list each
	// entry states its own Kind and this must be left out.
	ProtectedKind FlowKind `json:"protected_kind,omitzero"`
}

// PrimaryKind returns the kind of traffic of the primary protected flow:
// Protected[0].Kind, or ProtectedKind.
func (s *Scenario) PrimaryKind() FlowKind {
	if len(s.Protected) > 0 {
		return s.Protected[0].Kind
	}
	return s.ProtectedKind
}

// Protected is one protected flow of a scenario: one TCP connection from
// Src to Dst that starts with the episode on Switch and is modelled
// exactly as the single protected flow f_p is (package documentation,
// "Several protected flows").
type Protected struct {
	// Src and Dst name the flow's hosts, on different leaves.
	Src string `json:"src"`
	Dst string `json:"dst"`
	// SrcPort and DstPort are the connection's TCP ports, 1..65535
	// (default DefaultSrcPort and DefaultDstPort, f_p's); flows between the
	// same two hosts are told apart by their ports.
	SrcPort int `json:"src_port,omitempty"`
	DstPort int `json:"dst_port,omitempty"`
	// Switch names the aggregation switch carrying the flow at the start.
	Switch string `json:"switch"`
	// Weight is the flow's priority (proflow.ProtectedFlow.Weight): a
	// finite number > 0, or 0 for the default 1. The fabric only reports
	// it; it does not change the data plane.
	Weight float64 `json:"weight,omitempty"`
	// Cap caps the flow's sending rate (an application-limited flow, a
	// video at its bitrate, say), as a congester's stream_cap does; zero
	// means full rate, as f_p. Only a bulk flow has a cap: the other kinds
	// state their rate in Kind.
	Cap Rate `json:"cap,omitempty"`
	// Kind is the kind of traffic the flow carries; the zero value is a
	// bulk transfer.
	Kind FlowKind `json:"kind,omitzero"`
}

// The TCP ports of f_p, and of a protected flow whose ports are not given.
const (
	DefaultSrcPort = 5001
	DefaultDstPort = 5201
)

// ports returns the flow's ports, defaults filled in.
func (p Protected) ports() (src, dst uint16) {
	src, dst = DefaultSrcPort, DefaultDstPort
	if p.SrcPort != 0 {
		src = uint16(p.SrcPort)
	}
	if p.DstPort != 0 {
		dst = uint16(p.DstPort)
	}
	return src, dst
}

// Congester is one congester host: Streams parallel TCP connections from
// Host to Dst (an iperf3 -P client), all through one aggregation switch, for
// one period of time. A host that leaves and comes back is two Congesters
// whose periods do not overlap.
type Congester struct {
	// Host names the sending host, for example "h3".
	Host string `json:"host"`
	// Dst names the receiving host (default Config.CongestionSink).
	Dst string `json:"dst,omitempty"`
	// Streams is the number of parallel TCP streams (default
	// Config.StreamsPerCongester).
	Streams int `json:"streams,omitempty"`
	// StreamCap caps each stream's sending rate (iperf3 -b per stream);
	// zero means full rate.
	StreamCap Rate `json:"stream_cap,omitempty"`
	// Arrive is when the streams start.
	Arrive Duration `json:"arrive"`
	// Switch names the aggregation switch the streams take at arrival.
	Switch string `json:"switch"`
	// Moves re-route the host pair to another switch at the given times.
	Moves []Move `json:"moves,omitempty"`
	// Depart is when the streams stop; zero means they run to the end.
	Depart Duration `json:"depart,omitempty"`
}

// dst returns the name of the receiving host: Dst, or cfg's CongestionSink
// when Dst is empty.
func (c Congester) dst(cfg Config) string {
	if c.Dst == "" {
		return cfg.CongestionSink
	}
	return c.Dst
}

// Move re-routes a congester to Switch at time At.
type Move struct {
	// At is when the host pair's path changes.
	At Duration `json:"at"`
	// Switch names the aggregation switch it takes from then on.
	Switch string `json:"switch"`
}

// Defaults of a Scenario's zero-valued times.
const (
	DefaultCongestionStart = 20 * time.Second
	DefaultWindow          = 120 * time.Second
)

// Start returns CongestionStart, or its default.
func (s *Scenario) Start() time.Duration {
	if s.CongestionStart == 0 {
		return DefaultCongestionStart
	}
	return time.Duration(s.CongestionStart)
}

// Length returns the length of the whole episode: CongestionStart + Window.
func (s *Scenario) Length() time.Duration {
	w := time.Duration(s.Window)
	if w == 0 {
		w = DefaultWindow
	}
	return s.Start() + w
}

// Clone returns a deep copy of s.
func (s *Scenario) Clone() *Scenario {
	c := *s
	c.Congesters = slices.Clone(s.Congesters)
	c.Protected = slices.Clone(s.Protected)
	for i := range c.Congesters {
		c.Congesters[i].Moves = slices.Clone(c.Congesters[i].Moves)
	}
	return &c
}

// Validate checks the scenario against the fabric described by cfg and
// reports its problems, each as "scenario NAME: FIELD: PROBLEM", for
// example "scenario S6: congesters[2].moves[1].at: -3s is negative": the
// first DefaultLimits().MaxProblems of them, then a line counting the rest.
// It checks that the scenario is consistent, not its size (see Limits and
// ValidateLimits), and takes time in proportion to n log n for n
// congesters.
func (s *Scenario) Validate(cfg Config) error {
	return s.validate(cfg, nil)
}

// ValidateLimits checks the scenario as Validate does and also against the
// size limits lim (zero fields take their defaults), listing at most
// lim.MaxProblems problems. When there are more congesters than
// lim.MaxCongesters it reports that, with the other top-level problems,
// without looking at any congester.
func (s *Scenario) ValidateLimits(cfg Config, lim Limits) error {
	if err := lim.Validate(); err != nil {
		return err
	}
	lim = lim.withDefaults()
	return s.validate(cfg, &lim)
}

// validate implements Validate (lim nil) and ValidateLimits.
func (s *Scenario) validate(cfg Config, lim *Limits) error {
	name := clip(s.Name)
	if name == "" {
		name = "(unnamed)"
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("scenario %s: %w", name, err)
	}
	p := &problems{prefix: "scenario " + name + ": ", max: DefaultLimits().MaxProblems}
	if lim != nil {
		p.max = lim.MaxProblems
	}
	bad := p.add
	switch {
	case s.Name == "":
		bad("name", "empty, want a name")
	case !validName(s.Name):
		bad("name", "%q, want 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit (the name becomes part of file names)", clip(s.Name))
	}
	if len(s.Protected) == 0 || s.ProtectedSwitch != "" {
		if _, err := cfg.switchIndex(clip(s.ProtectedSwitch)); err != nil {
			bad("protected_switch", "%v", err)
		} else if len(s.Protected) > 0 && s.ProtectedSwitch != s.Protected[0].Switch {
			bad("protected_switch", "%s, but protected[0] starts on %q; want it empty or naming protected[0]'s switch", s.ProtectedSwitch, clip(s.Protected[0].Switch))
		}
	}
	checkDur := func(field string, d Duration, positive bool) bool {
		switch {
		case d == invalidDuration:
			bad(field, "not a duration, want for example \"20s\"")
		case d < 0:
			bad(field, "%v is negative", time.Duration(d))
		case positive && d == 0:
			bad(field, "zero, want a positive duration")
		default:
			return true
		}
		return false
	}
	okStart := checkDur("congestion_start", s.CongestionStart, false)
	okWindow := checkDur("window", s.Window, false)
	end := time.Duration(math.MaxInt64)
	if okStart && okWindow {
		if time.Duration(s.Window) > math.MaxInt64-s.Start() {
			bad("window", "%v after congestion_start %v ends past the largest time (%v), want a shorter window", time.Duration(s.Window), s.Start(), time.Duration(math.MaxInt64))
			okWindow = false
		} else {
			end = s.Length()
		}
	}
	if lim != nil {
		if okStart && s.Start() > lim.MaxCongestionStart {
			bad("congestion_start", "%v, want at most %v (Limits.MaxCongestionStart)", s.Start(), lim.MaxCongestionStart)
		}
		if w := end - s.Start(); okStart && okWindow && w > lim.MaxWindow {
			bad("window", "%v, want at most %v (Limits.MaxWindow)", w, lim.MaxWindow)
		}
		if n := len(s.Congesters); n > lim.MaxCongesters {
			bad("congesters", "%d entries, want at most %d (Limits.MaxCongesters)", n, lim.MaxCongesters)
			return p.err()
		}
		if n := s.totalStreams(cfg, lim.MaxTotalStreams); n > lim.MaxTotalStreams {
			bad("congesters", "more than %d streams in all, want at most %d (Limits.MaxTotalStreams)", lim.MaxTotalStreams, lim.MaxTotalStreams)
		}
	}
	if s.ProtectedKind != (FlowKind{}) {
		if len(s.Protected) > 0 {
			bad("protected_kind", "set with a protected list, want each flow's kind in protected[i].kind")
		} else {
			s.ProtectedKind.validate("protected_kind", p)
		}
	}
	if lim != nil && len(s.Protected) > lim.MaxProtected {
		bad("protected", "%d flows, want at most %d (Limits.MaxProtected)", len(s.Protected), lim.MaxProtected)
	} else {
		s.validateProtected(cfg, p)
	}
	maxStreams := math.MaxInt
	if lim != nil {
		maxStreams = lim.MaxStreamsPerCongester
	}
	var busy []period
	for i, c := range s.Congesters {
		f := "congesters[" + strconv.Itoa(i) + "]"
		src, errSrc := cfg.hostIndex(clip(c.Host))
		if errSrc != nil {
			bad(f+".host", "%v", errSrc)
		}
		dstName := clip(c.dst(cfg))
		dst, errDst := cfg.hostIndex(dstName)
		if errDst != nil {
			bad(f+".dst", "%v", errDst)
		}
		if errSrc == nil && errDst == nil && src/cfg.HostsPerLeaf == dst/cfg.HostsPerLeaf {
			bad(f+".dst", "%s is on the same leaf as %s, want a host on another leaf (congestion must cross the aggregation layer)", dstName, c.Host)
		}
		switch {
		case c.Streams < 0 && lim == nil:
			bad(f+".streams", "%d, want at least 1 (0 for the default %d)", c.Streams, cfg.StreamsPerCongester)
		case c.Streams < 0 || c.Streams > maxStreams:
			bad(f+".streams", "%d, want 1..%d (0 for the default %d; Limits.MaxStreamsPerCongester)", c.Streams, maxStreams, cfg.StreamsPerCongester)
		}
		switch r := float64(c.StreamCap); {
		case math.IsNaN(r):
			bad(f+".stream_cap", "not a rate, want for example \"1Mbit/s\"")
		case r < 0 || math.IsInf(r, 0):
			bad(f+".stream_cap", "%v, want a finite rate >= 0", c.StreamCap)
		}
		from := time.Duration(c.Arrive)
		okArrive := checkDur(f+".arrive", c.Arrive, false)
		if okArrive && from >= end {
			bad(f+".arrive", "%v is not before the end of the episode (%v)", from, end)
		}
		cur, errSw := cfg.switchIndex(clip(c.Switch))
		if errSw != nil {
			bad(f+".switch", "%v", errSw)
		}
		to := end
		if c.Depart != 0 && checkDur(f+".depart", c.Depart, false) {
			to = time.Duration(c.Depart)
			if okArrive && to <= from {
				bad(f+".depart", "%v is not after arrive %v", to, from)
			}
			if to > end {
				bad(f+".depart", "%v is after the end of the episode (%v)", to, end)
			}
		}
		if lim != nil && len(c.Moves) > lim.MaxMoves {
			bad(f+".moves", "%d moves, want at most %d (Limits.MaxMoves)", len(c.Moves), lim.MaxMoves)
			continue
		}
		prev := from
		for j, m := range c.Moves {
			mf := f + ".moves[" + strconv.Itoa(j) + "]"
			if checkDur(mf+".at", m.At, false) {
				at := time.Duration(m.At)
				switch {
				case at <= prev && j == 0:
					bad(mf+".at", "%v is not after arrive %v", at, prev)
				case at <= prev:
					bad(mf+".at", "%v is not after the previous move at %v", at, prev)
				case at >= to:
					bad(mf+".at", "%v is not before the congester leaves (%v)", at, to)
				}
				prev = max(prev, at)
			}
			k, err := cfg.switchIndex(clip(m.Switch))
			switch {
			case err != nil:
				bad(mf+".switch", "%v", err)
			case errSw == nil && k == cur:
				bad(mf+".switch", "%s is where the congester already is", m.Switch)
			}
			cur, errSw = k, err
		}
		if okArrive && errSrc == nil {
			busy = append(busy, period{host: src, from: from, to: to, idx: i})
		}
	}
	checkOverlaps(busy, s.Congesters, p)
	return p.err()
}

// validateProtected checks every entry of s.Protected: hosts of the
// fabric on different leaves, ports in range, a switch of the fabric, a
// usable weight and cap, and no flow listed twice. Duplicates are found
// with a map, in time proportional to the number of flows.
func (s *Scenario) validateProtected(cfg Config, p *problems) {
	first := make(map[proflow.FlowID]int, len(s.Protected))
	for i, pf := range s.Protected {
		f := "protected[" + strconv.Itoa(i) + "]"
		src, errSrc := cfg.hostIndex(clip(pf.Src))
		if errSrc != nil {
			p.add(f+".src", "%v", errSrc)
		}
		dst, errDst := cfg.hostIndex(clip(pf.Dst))
		if errDst != nil {
			p.add(f+".dst", "%v", errDst)
		}
		if errSrc == nil && errDst == nil && src/cfg.HostsPerLeaf == dst/cfg.HostsPerLeaf {
			p.add(f+".dst", "%s is on the same leaf as %s, want a host on another leaf (a protected flow crosses the aggregation layer)", pf.Dst, pf.Src)
		}
		okPorts := true
		for _, port := range [...]struct {
			name string
			v    int
		}{{"src_port", pf.SrcPort}, {"dst_port", pf.DstPort}} {
			if port.v < 0 || port.v > math.MaxUint16 {
				p.add(f+"."+port.name, "%d, want a TCP port 1..65535 (0 for the default)", port.v)
				okPorts = false
			}
		}
		if _, err := cfg.switchIndex(clip(pf.Switch)); err != nil {
			p.add(f+".switch", "%v", err)
		}
		if w := pf.Weight; w < 0 || math.IsNaN(w) || math.IsInf(w, 0) {
			p.add(f+".weight", "%v, want a finite number > 0 (0 for the default 1)", w)
		}
		switch r := float64(pf.Cap); {
		case math.IsNaN(r):
			p.add(f+".cap", "not a rate, want for example \"100Mbit/s\"")
		case r < 0 || math.IsInf(r, 0):
			p.add(f+".cap", "%v, want a finite rate >= 0 (0 for full rate)", pf.Cap)
		case r != 0 && !pf.Kind.IsBulk():
			p.add(f+".cap", "set for kind %s, want the rate in kind.rate or kind.rate_fraction (only a bulk flow has a cap)", pf.Kind.Name())
		}
		if pf.Kind != (FlowKind{}) {
			pf.Kind.validate(f+".kind", p)
		}
		if errSrc != nil || errDst != nil || !okPorts {
			continue
		}
		sp, dp := pf.ports()
		id := flowID(src, dst, sp, dp)
		if j, dup := first[id]; dup {
			p.add(f, "flow %v repeats protected[%d], want distinct flows (src_port or dst_port tell flows between the same hosts apart)", id, j)
			continue
		}
		first[id] = i
	}
}

// primarySwitch returns the name of the switch the primary protected flow
// starts on.
func (s *Scenario) primarySwitch() string {
	if len(s.Protected) > 0 {
		return s.Protected[0].Switch
	}
	return s.ProtectedSwitch
}

// period is the time a congester host sends: [from, to).
type period struct {
	host     int // host index
	from, to time.Duration
	idx      int // congester index
}

// checkOverlaps reports every period that overlaps an earlier-starting
// period of the same host, naming the one it overlaps. Sorting by host and
// start makes it O(n log n): each period is compared only with the
// host's period that reaches furthest among those starting before it.
func checkOverlaps(busy []period, cgs []Congester, p *problems) {
	slices.SortFunc(busy, func(a, b period) int {
		if c := cmp.Compare(a.host, b.host); c != 0 {
			return c
		}
		if c := cmp.Compare(a.from, b.from); c != 0 {
			return c
		}
		return cmp.Compare(a.idx, b.idx)
	})
	for i := 1; i < len(busy); i++ {
		if busy[i].host != busy[i-1].host {
			continue
		}
		// busy[i-1] is, by now, the furthest-reaching of the host's
		// periods that start before busy[i].
		q, r := busy[i-1], busy[i]
		if r.from < q.to {
			p.add("congesters["+strconv.Itoa(r.idx)+"].arrive", "host %s already sends as congesters[%d] from %v to %v, want non-overlapping periods", cgs[r.idx].Host, q.idx, q.from, q.to)
		}
		if r.to < q.to {
			busy[i] = q
		}
	}
}

// totalStreams returns the number of streams of all congesters, or a number
// above most once it exceeds most (the sum cannot overflow).
func (s *Scenario) totalStreams(cfg Config, most int) int {
	n := 0
	for _, c := range s.Congesters {
		k := c.Streams
		if k == 0 {
			k = cfg.StreamsPerCongester
		}
		n += min(max(k, 0), most+1)
		if n > most {
			return n
		}
	}
	return n
}

// ReadScenario decodes one scenario from r (JSON; unknown fields are an
// error) and validates it against cfg and DefaultLimits.
func ReadScenario(r io.Reader, cfg Config) (*Scenario, error) {
	return readScenario(r, cfg, DefaultLimits(), "")
}

// ReadScenarioWithLimits is ReadScenario with the limits lim instead of
// DefaultLimits (zero fields take their defaults): it reads at most
// lim.MaxBytes bytes from r and validates the scenario with ValidateLimits.
func ReadScenarioWithLimits(r io.Reader, cfg Config, lim Limits) (*Scenario, error) {
	return readScenario(r, cfg, lim, "")
}

func readScenario(r io.Reader, cfg Config, lim Limits, source string) (*Scenario, error) {
	if err := lim.Validate(); err != nil {
		return nil, err
	}
	lim = lim.withDefaults()
	where := "scenario"
	if source != "" {
		where = "scenario " + source
	}
	data, err := io.ReadAll(io.LimitReader(r, lim.MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: read: %w", where, err)
	}
	if int64(len(data)) > lim.MaxBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes, want a scenario of at most %d bytes (Limits.MaxBytes)", where, lim.MaxBytes, lim.MaxBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Scenario
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%s: decode: %w", where, clippedError{err})
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s: unexpected data after the scenario object at byte %d, want one JSON object", where, dec.InputOffset())
	}
	if err := s.validate(cfg, &lim); err != nil {
		return nil, err
	}
	return &s, nil
}

// LoadScenario reads and validates the scenario file at path, as
// ReadScenario does.
func LoadScenario(path string, cfg Config) (*Scenario, error) {
	return LoadScenarioWithLimits(path, cfg, DefaultLimits())
}

// LoadScenarioWithLimits reads and validates the scenario file at path, as
// ReadScenarioWithLimits does.
func LoadScenarioWithLimits(path string, cfg Config, lim Limits) (*Scenario, error) {
	f, err := fileutil.Open(path)
	if err != nil {
		return nil, fmt.Errorf("sim: load scenario: %w", err)
	}
	defer f.Close()
	return readScenario(f, cfg, lim, path)
}

//go:embed scenarios/*.json
var builtinFS embed.FS

// BuiltinScenarios returns the names of the embedded scenarios: S1–S12, C1
// and C2 of the paper, in that order (the variants S11b–S11e and S12b–S12e
// right after S11 and S12), then the others by prefix and number (M1–M4,
// several protected flows; N1, N2; O1–O12, Q1, Q2, R1–R12, T1–T3 and
// V1–V12, protected flows of the kinds onoff, rr and rate). The held-out
// families are not among them (see FamilyScenarios and
// KindsFamilyScenarios).
func BuiltinScenarios() []string {
	entries, _ := builtinFS.ReadDir("scenarios")
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".json"))
	}
	slices.SortFunc(names, compareScenarioNames)
	return names
}

// compareScenarioNames orders S before C and numbers numerically; a
// letter after the number sorts a variant right after its scenario (S11,
// S11b, …, S11e, S12).
func compareScenarioNames(a, b string) int {
	// The paper's scenarios first (S, then C), then the others by prefix;
	// within a prefix by number, then by the whole name.
	isDigit := func(r rune) bool { return r >= '0' && r <= '9' }
	rank := func(s string) (int, string, int) {
		i := strings.IndexFunc(s, isDigit)
		if i < 0 {
			i = len(s)
		}
		j := strings.IndexFunc(s[i:], func(r rune) bool { return !isDigit(r) })
		if j < 0 {
			j = len(s) - i
		}
		n, _ := strconv.Atoi(s[i : i+j])
		switch s[:i] {
		case "S":
			return 0, "", n
		case "C":
			return 1, "", n
		}
		return 2, s[:i], n
	}
	ga, pa, na := rank(a)
	gb, pb, nb := rank(b)
	if c := cmp.Compare(ga, gb); c != 0 {
		return c
	}
	if c := strings.Compare(pa, pb); c != 0 {
		return c
	}
	if c := cmp.Compare(na, nb); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// BuiltinScenario returns a fresh copy of the embedded scenario name (see
// BuiltinScenarios), validated against the default configuration.
func BuiltinScenario(name string) (*Scenario, error) {
	data, err := BuiltinScenarioJSON(name)
	if err != nil {
		return nil, err
	}
	return readScenario(bytes.NewReader(data), DefaultConfig(), DefaultLimits(), name)
}

// BuiltinScenarioJSON returns the embedded JSON text of scenario name.
func BuiltinScenarioJSON(name string) ([]byte, error) {
	data, err := builtinFS.ReadFile(path.Join("scenarios", name+".json"))
	if err != nil {
		return nil, fmt.Errorf("sim: no built-in scenario %q, want one of %v", name, BuiltinScenarios())
	}
	return data, nil
}

// Duration is a time.Duration written in JSON as a Go duration string such
// as "20s" or "1m30s".
type Duration time.Duration

// invalidDuration marks a value that did not parse; Validate reports it
// with its field name (json.Decoder cannot name the field of a failing
// TextUnmarshaler).
const invalidDuration = Duration(math.MinInt64)

// MarshalText writes the duration as time.Duration.String does.
func (d Duration) MarshalText() ([]byte, error) {
	if d == invalidDuration {
		return nil, errors.New("sim: invalid duration")
	}
	return []byte(time.Duration(d).String()), nil
}

// UnmarshalText parses a Go duration string. A malformed one is kept as a
// marker that Scenario.Validate reports with the field name.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		*d = invalidDuration
		return nil
	}
	*d = Duration(v)
	return nil
}

// String formats d like time.Duration.
func (d Duration) String() string { return time.Duration(d).String() }

// Rate is a rate in bytes per second, written in JSON with a unit: bits
// ("1Mbit/s", "200Mbit/s", "1Gbit/s", "500kbit/s", "64bit/s"; "Mbps" is
// accepted) or bytes ("25MB/s", "1500B/s"). Prefixes are decimal.
type Rate float64

var rateUnits = []struct {
	suffix string
	bytes  float64 // bytes per second of one unit
}{
	{"Gbit/s", 1e9 / 8}, {"Mbit/s", 1e6 / 8}, {"kbit/s", 1e3 / 8}, {"bit/s", 1.0 / 8},
	{"Gbps", 1e9 / 8}, {"Mbps", 1e6 / 8}, {"kbps", 1e3 / 8}, {"bps", 1.0 / 8},
	{"GB/s", 1e9}, {"MB/s", 1e6}, {"kB/s", 1e3}, {"B/s", 1},
}

// MarshalText writes the rate in the largest bit unit that represents it
// exactly, or in bytes per second.
func (r Rate) MarshalText() ([]byte, error) {
	v := float64(r)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil, fmt.Errorf("sim: rate %v is not finite", v)
	}
	for _, u := range rateUnits[:3] { // Gbit/s, Mbit/s, kbit/s
		q := v / u.bytes
		if q < 1 {
			continue
		}
		text := strconv.FormatFloat(q, 'f', -1, 64)
		if back, err := strconv.ParseFloat(text, 64); err == nil && back*u.bytes == v && len(text) <= 8 {
			return []byte(text + u.suffix), nil
		}
	}
	return []byte(strconv.FormatFloat(v, 'g', -1, 64) + "B/s"), nil
}

// UnmarshalText parses a rate with a unit. A malformed one is kept as NaN,
// which Scenario.Validate reports with the field name.
func (r *Rate) UnmarshalText(b []byte) error {
	v, err := ParseRate(string(b))
	if err != nil {
		*r = Rate(math.NaN())
		return nil
	}
	*r = v
	return nil
}

// ParseRate parses a rate such as "1Mbit/s", "200 Mbit/s" or "25MB/s".
func ParseRate(s string) (Rate, error) {
	t := strings.TrimSpace(s)
	for _, u := range rateUnits {
		if num, ok := strings.CutSuffix(t, u.suffix); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
			if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
				break
			}
			return Rate(v * u.bytes), nil
		}
	}
	return 0, fmt.Errorf("sim: rate %q, want a number and a unit such as \"1Mbit/s\" or \"25MB/s\"", s)
}

// String formats r as MarshalText does.
func (r Rate) String() string {
	b, err := r.MarshalText()
	if err != nil {
		return strconv.FormatFloat(float64(r), 'g', -1, 64) + "B/s"
	}
	return string(b)
}
