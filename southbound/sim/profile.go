package sim

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/proflow-sdn/proflow/internal/fileutil"
	"github.com/proflow-sdn/proflow/internal/jsonend"
)

// The built-in profiles of the simulated world (package documentation,
// "Profiles").
const (
	// ProfileTestbed is the paper's FABRIC testbed as observed: slow
	// recovery after a move, a reactive confirmation tens of seconds late.
	// The commands' default.
	ProfileTestbed = "testbed"
	// ProfileDatacenter is a datacenter with short round-trip times, where
	// a collapse is seen and repaired within a second.
	ProfileDatacenter = "datacenter"
	// ProfileOVS is the real Open vSwitch fabric of package
	// southbound/openflow/ovsfabric at its default scale (OVSConfig).
	ProfileOVS = "ovs"
	// ProfileOVSRegime is that fabric in the paper's regime: 50 ms round
	// trips, CUBIC, a receive-window-limited protected flow and an H-limit
	// (OVSRegimeConfig).
	ProfileOVSRegime = "ovs-regime"
)

// DefaultProfile is the profile the proflow commands use unless told
// otherwise.
const DefaultProfile = ProfileTestbed

// Profiles returns the names of the built-in profiles.
func Profiles() []string {
	return []string{ProfileTestbed, ProfileDatacenter, ProfileOVS, ProfileOVSRegime}
}

// DatacenterConfig returns the datacenter profile, which is DefaultConfig.
func DatacenterConfig() Config { return DefaultConfig() }

// TestbedConfig returns the testbed profile: the datacenter fabric with
// the paths, transport and limits fitted to what the paper observed on its
// FABRIC testbed (package documentation, "Profile testbed"; every value
// there with the observation it reproduces).
func TestbedConfig() Config {
	c := DefaultConfig()
	c.Name = ProfileTestbed
	c.BaseRTT = 50 * time.Millisecond
	c.RTTJitter = 0.07
	c.FlowQueueLimit = 50 * c.PacketSize
	c.ReceiveWindow = 0.988 * c.BucketRate * c.BaseRTT.Seconds()
	c.RerouteTimeout = true
	c.CubicResetOnTimeout = true
	c.HyStartAckTrain = true
	c.UncountedRate = 1.05 * c.BucketRate
	c.UncountedBurst = 1.25e9
	c.UncountedQueueLimit = 100 * c.PacketSize
	c.BucketBurst = c.UncountedBurst + 66*(c.UncountedRate-c.BucketRate)
	c.ControllerWarmup = 12 * time.Second
	return c
}

// ProfileConfig returns the built-in profile of that name.
func ProfileConfig(name string) (Config, error) {
	switch name {
	case ProfileTestbed:
		return TestbedConfig(), nil
	case ProfileDatacenter:
		return DatacenterConfig(), nil
	case ProfileOVS:
		return OVSConfig(), nil
	case ProfileOVSRegime:
		return OVSRegimeConfig(), nil
	}
	return Config{}, fmt.Errorf("sim: unknown profile %q, want one of %s or a JSON file", name, strings.Join(Profiles(), ", "))
}

// LoadProfile returns a built-in profile by name, or reads a profile file:
// a Config in JSON (ReadProfile). A file without a name is named after
// the file. A name may carry a size and a rate factor as WithFabric and
// ScaleRates name them, "testbed-6x3", "testbed@x2", "testbed-16x3@x0.5",
// so that a recorded profile name loads again.
func LoadProfile(nameOrPath string) (Config, error) {
	if slices.Contains(Profiles(), nameOrPath) {
		return ProfileConfig(nameOrPath)
	}
	if base, size, k := splitProfileName(nameOrPath); base != nameOrPath && (slices.Contains(Profiles(), base) || strings.HasSuffix(base, ".json")) {
		c, err := LoadProfile(base)
		if err != nil {
			return Config{}, err
		}
		if size != "" {
			s, l, _ := parseSizeSuffix(size)
			if c, err = c.WithFabric(s, l); err != nil {
				return Config{}, err
			}
		}
		return c.ScaleRates(k)
	}
	if !strings.HasSuffix(nameOrPath, ".json") {
		_, err := ProfileConfig(nameOrPath)
		return Config{}, err
	}
	f, err := fileutil.Open(nameOrPath)
	if err != nil {
		return Config{}, fmt.Errorf("sim: profile: %w", err)
	}
	defer f.Close()
	c, err := ReadProfile(f)
	if err != nil {
		return Config{}, fmt.Errorf("sim: profile %s: %w", nameOrPath, err)
	}
	if c.Name == "" {
		c.Name = strings.TrimSuffix(filepath.Base(nameOrPath), ".json")
	}
	return c, nil
}

// maxProfileBytes bounds a profile file: a Config is a few kilobytes.
const maxProfileBytes = 1 << 20

// ReadProfile reads a Config in JSON. Every field must be known; fields
// left out keep DefaultConfig's values; the result is validated, and every
// problem is reported with the field it is in.
func ReadProfile(r io.Reader) (Config, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxProfileBytes+1))
	if err != nil {
		return Config{}, fmt.Errorf("read: %w", err)
	}
	if len(b) > maxProfileBytes {
		return Config{}, fmt.Errorf("profile larger than %d bytes, want a JSON Config", maxProfileBytes)
	}
	c := DefaultConfig()
	c.Name = ""
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Config{}, fmt.Errorf("decode: %w", err)
	}
	if jsonend.End(dec) != nil {
		return Config{}, errors.New("decode: data after the JSON object, want one Config")
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// configJSON is Config's JSON form: durations as Go duration strings
// ("50ms") rather than nanoseconds.
type configJSON struct {
	configAlias
	BaseRTT    Duration `json:"base_rtt"`
	RTOMin     Duration `json:"rto_min"`
	RTOMax     Duration `json:"rto_max"`
	SYNTimeout Duration `json:"syn_timeout"`
	Step       Duration `json:"step"`
	Interval   Duration `json:"interval"`
	Warmup     Duration `json:"controller_warmup"`
}

// configAlias has Config's fields without its methods, so that the JSON
// methods do not recurse.
type configAlias Config

// toJSON returns c's JSON form.
func (c Config) toJSON() configJSON {
	return configJSON{
		configAlias: configAlias(c),
		BaseRTT:     Duration(c.BaseRTT), RTOMin: Duration(c.RTOMin), RTOMax: Duration(c.RTOMax),
		SYNTimeout: Duration(c.SYNTimeout), Step: Duration(c.Step), Interval: Duration(c.Interval),
		Warmup: Duration(c.ControllerWarmup),
	}
}

// config returns the Config j describes.
func (j configJSON) config() Config {
	c := Config(j.configAlias)
	c.BaseRTT, c.RTOMin, c.RTOMax = time.Duration(j.BaseRTT), time.Duration(j.RTOMin), time.Duration(j.RTOMax)
	c.SYNTimeout, c.Step, c.Interval = time.Duration(j.SYNTimeout), time.Duration(j.Step), time.Duration(j.Interval)
	c.ControllerWarmup = time.Duration(j.Warmup)
	return c
}

// MarshalJSON writes the configuration with durations as strings.
func (c Config) MarshalJSON() ([]byte, error) { return json.Marshal(c.toJSON()) }

// UnmarshalJSON reads the configuration, durations as strings ("50ms").
// Fields absent from the input keep their values; an unknown field is an
// error.
func (c *Config) UnmarshalJSON(b []byte) error {
	j := c.toJSON()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return err
	}
	*c = j.config()
	return nil
}

// Digest identifies the configuration: "sha256:" and the hex SHA-256 of
// its JSON form. Two configurations with the same digest simulate the same
// world; models, datasets and reports record it beside the profile's name.
func (c Config) Digest() string {
	b, err := json.Marshal(c)
	if err != nil {
		// Only a configuration that fails Validate (a NaN or infinite
		// number) has no JSON form; it still gets a stable digest.
		b = fmt.Appendf(nil, "%+v", c)
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
