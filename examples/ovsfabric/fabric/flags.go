package fabric

import (
	"flag"
	"io"
	"log/slog"
	"time"
)

// CommandFlags are the command-line settings that the ovsfabric example and
// `proflow fabric` share: where the fabric's links and OVS files go, where
// its controller listens, the uplink bucket rate and, for run, the
// experiment.
type CommandFlags struct {
	Prefix, RunDir, Listen, Bucket string
	Policy, Scenario               string
	Warmup, Duration               time.Duration
	Verbose                        bool
}

// Register defines the flags on fs, with the defaults of both commands, and
// stores their values in f when fs is parsed.
func (f *CommandFlags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.Prefix, "prefix", "pf-", "prefix of every namespace, link and bridge")
	fs.StringVar(&f.RunDir, "rundir", "/tmp/proflow-ovs", "OVS run directory")
	fs.StringVar(&f.Listen, "listen", "127.0.0.1:6653", "OpenFlow controller address")
	fs.StringVar(&f.Bucket, "bucket", "10mbit", "tc tbf rate of every aggregation uplink (the paper: 200mbit; scaled down for 2 cores)")
	fs.StringVar(&f.Policy, "policy", "crowd", "run: static, crowd or reactive")
	fs.StringVar(&f.Scenario, "scenario", "s1", "run: s1 (five congesters onto the protected flow's switch) or none")
	fs.DurationVar(&f.Warmup, "warmup", 10*time.Second, "run: protected flow alone before congestion")
	fs.DurationVar(&f.Duration, "duration", 40*time.Second, "run: time after congestion starts")
	fs.BoolVar(&f.Verbose, "v", false, "log controller decisions and fabric commands")
}

// Config returns the fabric configuration the flags describe, logging to w:
// warnings, or everything with -v.
func (f *CommandFlags) Config(w io.Writer) Config {
	level := slog.LevelWarn
	if f.Verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
	return Config{Prefix: f.Prefix, RunDir: f.RunDir, Controller: "tcp:" + f.Listen, BucketRate: f.Bucket, Logger: log}
}

// Experiment returns the run sub-command's experiment on the fabric cfg
// (from Config), writing its report to out.
func (f *CommandFlags) Experiment(cfg Config, out io.Writer) Experiment {
	return Experiment{Fabric: cfg, Listen: f.Listen, Policy: f.Policy, Scenario: f.Scenario,
		Warmup: f.Warmup, Duration: f.Duration, Out: out, Logger: cfg.Logger}
}
