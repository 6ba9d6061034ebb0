package sim

import (
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"
)

// Limits bound how large a scenario read from a file may be, so that a
// mistyped or hostile file is refused with an error instead of exhausting
// memory or running for hours. The cost of an episode grows with its length
// and with the number of TCP streams: at the defaults the largest scenario
// (a 1 h 10 min episode with 1,024 streams) simulates in about a minute on
// one core (45 s measured; a built-in scenario takes 0.05 s) and keeps a
// trace of 8,400 steps.
//
// ReadScenario, LoadScenario and BuiltinScenario apply DefaultLimits;
// ReadScenarioWithLimits and LoadScenarioWithLimits take others, for
// research beyond them. The limits are checked before the scenario is
// simulated or validated in detail: the file's size before it is decoded,
// the number of congesters before any of them is checked.
// Scenario.Validate, which New and RunEpisode call, checks that a scenario
// is consistent but not its size, so a scenario built in code, or read with
// raised limits, runs whatever its size; Scenario.ValidateLimits checks
// both.
//
// A zero field means its default; a negative one is an error (see
// Validate). The number of hosts is bounded by the fabric (Config allows at
// most 250, the addresses 10.0.0.1–250), not by Limits.
type Limits struct {
	// MaxBytes bounds the size of a scenario file, in bytes (default
	// 1 MiB; the built-in scenarios are under 2 kB).
	MaxBytes int64
	// MaxCongestionStart bounds congestion_start (default 10 min).
	MaxCongestionStart time.Duration
	// MaxWindow bounds window, the evaluation window (default 1 h).
	MaxWindow time.Duration
	// MaxCongesters bounds the number of entries in congesters (default
	// 256).
	MaxCongesters int
	// MaxMoves bounds the moves of one congester (default 64).
	MaxMoves int
	// MaxStreamsPerCongester bounds one congester's streams (default
	// MaxStreams, 128).
	MaxStreamsPerCongester int
	// MaxTotalStreams bounds the streams of all congesters together,
	// counting Config.StreamsPerCongester for a congester that does not say
	// (default 1,024; the built-in scenarios have at most 80). Every
	// congester's streams are simulated for the whole episode.
	MaxTotalStreams int
	// MaxProtected bounds the entries of protected, the protected flows
	// (default 256; one TCP stream each).
	MaxProtected int
	// MaxProblems bounds how many problems one error lists; the rest are
	// counted in a last line "… and N more problems" (default 20).
	MaxProblems int
}

// DefaultLimits returns the limits ReadScenario applies: 1 MiB files,
// congestion_start up to 10 min, windows up to 1 h, 256 congesters with 64
// moves and 128 streams each and 1,024 streams in all, 256 protected
// flows, and 20 problems per error.
func DefaultLimits() Limits {
	return Limits{
		MaxBytes:               1 << 20,
		MaxCongestionStart:     10 * time.Minute,
		MaxWindow:              time.Hour,
		MaxCongesters:          256,
		MaxMoves:               64,
		MaxStreamsPerCongester: MaxStreams,
		MaxTotalStreams:        1024,
		MaxProtected:           256,
		MaxProblems:            20,
	}
}

// Validate reports every negative field of l (zero fields take their
// defaults).
func (l Limits) Validate() error {
	var errs []error
	neg := func(name string, v int64, show string) {
		if v < 0 {
			errs = append(errs, fmt.Errorf("%s %s, want a positive limit (or 0 for the default)", name, show))
		}
	}
	neg("MaxBytes", l.MaxBytes, strconv.FormatInt(l.MaxBytes, 10))
	neg("MaxCongestionStart", int64(l.MaxCongestionStart), l.MaxCongestionStart.String())
	neg("MaxWindow", int64(l.MaxWindow), l.MaxWindow.String())
	for _, f := range [...]struct {
		name string
		v    int
	}{
		{"MaxCongesters", l.MaxCongesters}, {"MaxMoves", l.MaxMoves},
		{"MaxStreamsPerCongester", l.MaxStreamsPerCongester},
		{"MaxTotalStreams", l.MaxTotalStreams}, {"MaxProtected", l.MaxProtected},
		{"MaxProblems", l.MaxProblems},
	} {
		neg(f.name, int64(f.v), strconv.Itoa(f.v))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("sim: invalid scenario limits: %w", err)
	}
	return nil
}

// withDefaults returns l with every zero field set to its default.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	or := func(v *int, def int) {
		if *v == 0 {
			*v = def
		}
	}
	if l.MaxBytes == 0 {
		l.MaxBytes = d.MaxBytes
	}
	if l.MaxCongestionStart == 0 {
		l.MaxCongestionStart = d.MaxCongestionStart
	}
	if l.MaxWindow == 0 {
		l.MaxWindow = d.MaxWindow
	}
	or(&l.MaxCongesters, d.MaxCongesters)
	or(&l.MaxMoves, d.MaxMoves)
	or(&l.MaxStreamsPerCongester, d.MaxStreamsPerCongester)
	or(&l.MaxTotalStreams, d.MaxTotalStreams)
	or(&l.MaxProtected, d.MaxProtected)
	or(&l.MaxProblems, d.MaxProblems)
	return l
}

// problems collects the problems of one validation: the first max of them,
// and a count of the rest.
type problems struct {
	prefix string // "scenario NAME: "
	max    int
	errs   []error
	more   int
}

// add records the problem "FIELD: MESSAGE", formatting it only while there
// is room for it.
func (p *problems) add(field, format string, a ...any) {
	if len(p.errs) >= p.max {
		p.more++
		return
	}
	p.errs = append(p.errs, fmt.Errorf("%s%s: %s", p.prefix, field, fmt.Sprintf(format, a...)))
}

// err joins the problems, one a line, the last line counting those left
// out; nil when there are none.
func (p *problems) err() error {
	errs := p.errs
	if p.more > 0 {
		errs = append(errs, fmt.Errorf("%s… and %d more problems (at most %d are listed)", p.prefix, p.more, p.max))
	}
	return errors.Join(errs...)
}

// maxEcho is how many bytes of a user's string an error message repeats.
const maxEcho = 64

// clip returns s, or its first maxEcho bytes (whole characters) and "…"
// when it is longer, so that an error message quoting a user's value stays
// short whatever the value.
func clip(s string) string {
	if len(s) <= maxEcho {
		return s
	}
	return cut(s, maxEcho) + "…"
}

// cut returns the longest prefix of s of at most n bytes that does not end
// inside a UTF-8 sequence.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// clippedError is an error whose message is cut to a bounded length; it
// still unwraps to the original.
type clippedError struct{ err error }

func (e clippedError) Error() string {
	const most = 4 * maxEcho
	msg := e.err.Error()
	if len(msg) <= most {
		return msg
	}
	return cut(msg, most) + fmt.Sprintf("… (%d bytes in all)", len(msg))
}

func (e clippedError) Unwrap() error { return e.err }

// validName reports whether name is a safe scenario name: 1 to 64 ASCII
// letters, digits, '.', '_' and '-', starting with a letter or a digit. Such
// a name can be part of a file name (trace files are named after their
// scenario) without leaving the directory or hiding the file.
func validName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case i > 0 && (c == '.' || c == '_' || c == '-'):
		default:
			return false
		}
	}
	return true
}
