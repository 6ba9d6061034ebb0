package sim

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
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
	// flow at the start (its ECMP placement).
	ProtectedSwitch string `json:"protected_switch"`
	// CongestionStart is when the evaluation window opens (default 20 s:
	// TCP ramp-up and the controller's baseline phase come first).
	CongestionStart Duration `json:"congestion_start,omitempty"`
	// Window is the length of the evaluation window (default 120 s).
	Window Duration `json:"window,omitempty"`
	// Congesters are the congestion sources.
	Congesters []Congester `json:"congesters"`
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
	for i := range c.Congesters {
		c.Congesters[i].Moves = slices.Clone(c.Congesters[i].Moves)
	}
	return &c
}

// Validate checks the scenario against the fabric described by cfg and
// reports every problem, each as "scenario NAME: FIELD: PROBLEM", for
// example "scenario S6: congesters[2].moves[1].at: -3s is negative".
func (s *Scenario) Validate(cfg Config) error {
	name := s.Name
	if name == "" {
		name = "(unnamed)"
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("scenario %s: %w", name, err)
	}
	var errs []error
	bad := func(field, format string, a ...any) {
		errs = append(errs, fmt.Errorf("scenario %s: %s: %s", name, field, fmt.Sprintf(format, a...)))
	}
	if s.Name == "" {
		bad("name", "empty, want a name")
	}
	if _, err := cfg.switchIndex(s.ProtectedSwitch); err != nil {
		bad("protected_switch", "%v", err)
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
		end = s.Length()
	}
	type period struct {
		from, to time.Duration
		idx      int
	}
	busy := map[string][]period{}
	for i, c := range s.Congesters {
		f := fmt.Sprintf("congesters[%d]", i)
		src, errSrc := cfg.hostIndex(c.Host)
		if errSrc != nil {
			bad(f+".host", "%v", errSrc)
		}
		dstName := c.dst(cfg)
		dst, errDst := cfg.hostIndex(dstName)
		if errDst != nil {
			bad(f+".dst", "%v", errDst)
		}
		if errSrc == nil && errDst == nil && src/cfg.HostsPerLeaf == dst/cfg.HostsPerLeaf {
			bad(f+".dst", "%s is on the same leaf as %s, want a host on another leaf (congestion must cross the aggregation layer)", dstName, c.Host)
		}
		if c.Streams < 0 || c.Streams > MaxStreams {
			bad(f+".streams", "%d, want 1..%d (0 for the default %d)", c.Streams, MaxStreams, cfg.StreamsPerCongester)
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
		cur, errSw := cfg.switchIndex(c.Switch)
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
		prev := from
		for j, m := range c.Moves {
			mf := fmt.Sprintf("%s.moves[%d]", f, j)
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
			k, err := cfg.switchIndex(m.Switch)
			switch {
			case err != nil:
				bad(mf+".switch", "%v", err)
			case errSw == nil && k == cur:
				bad(mf+".switch", "%s is where the congester already is", m.Switch)
			}
			cur, errSw = k, err
		}
		if okArrive && errSrc == nil {
			for _, p := range busy[c.Host] {
				if from < p.to && p.from < to {
					bad(f+".arrive", "host %s already sends as congesters[%d] from %v to %v, want non-overlapping periods", c.Host, p.idx, p.from, p.to)
				}
			}
			busy[c.Host] = append(busy[c.Host], period{from, to, i})
		}
	}
	return errors.Join(errs...)
}

// ReadScenario decodes one scenario from r (JSON; unknown fields are an
// error) and validates it against cfg.
func ReadScenario(r io.Reader, cfg Config) (*Scenario, error) {
	return readScenario(r, cfg, "")
}

func readScenario(r io.Reader, cfg Config, source string) (*Scenario, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var s Scenario
	where := "scenario"
	if source != "" {
		where = "scenario " + source
	}
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%s: decode: %w", where, err)
	}
	if tok, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s: unexpected data after the scenario object (%v)", where, tok)
	}
	if err := s.Validate(cfg); err != nil {
		return nil, err
	}
	return &s, nil
}

// LoadScenario reads and validates the scenario file at path.
func LoadScenario(path string, cfg Config) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("sim: load scenario: %w", err)
	}
	return readScenario(bytes.NewReader(data), cfg, path)
}

//go:embed scenarios/*.json
var builtinFS embed.FS

// BuiltinScenarios returns the names of the embedded scenarios: S1–S12, C1
// and C2 of the paper, in that order.
func BuiltinScenarios() []string {
	entries, _ := builtinFS.ReadDir("scenarios")
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".json"))
	}
	slices.SortFunc(names, compareScenarioNames)
	return names
}

// compareScenarioNames orders S before C and numbers numerically.
func compareScenarioNames(a, b string) int {
	rank := func(s string) (int, int) {
		n, _ := strconv.Atoi(s[1:])
		if s[0] == 'S' {
			return 0, n
		}
		return 1, n
	}
	ra, na := rank(a)
	rb, nb := rank(b)
	if ra != rb {
		return ra - rb
	}
	if na != nb {
		return na - nb
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
	return readScenario(bytes.NewReader(data), DefaultConfig(), name)
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
