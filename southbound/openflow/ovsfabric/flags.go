package ovsfabric

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

// Register defines on fs the flags of the sub-command sub ("up", "down"
// or "run"), with the defaults of both commands, and stores their values in
// f when fs is parsed. down takes -prefix, -rundir and -v; up adds -listen
// and -bucket; run adds the experiment's -policy, -scenario, -warmup and
// -duration. Any other sub gets down's flags. Settings whose flag sub does
// not take keep their defaults.
func (f *CommandFlags) Register(fs *flag.FlagSet, sub string) {
	*f = CommandFlags{Prefix: "pf-", RunDir: "/tmp/proflow-ovs", Listen: "127.0.0.1:6653", Bucket: "10mbit",
		Policy: "crowd", Scenario: "s1", Warmup: 10 * time.Second, Duration: 40 * time.Second}
	fs.StringVar(&f.Prefix, "prefix", f.Prefix, "prefix of every namespace, link and bridge")
	fs.StringVar(&f.RunDir, "rundir", f.RunDir, "OVS run directory `DIR` (database, sockets, pid files, logs)")
	verbose := "log the commands that build or remove the fabric"
	if sub == "run" {
		verbose = "log controller decisions and fabric commands"
	}
	fs.BoolVar(&f.Verbose, "v", false, verbose)
	if sub != "up" && sub != "run" {
		return
	}
	fs.StringVar(&f.Listen, "listen", f.Listen, "OpenFlow controller `ADDRESS`")
	fs.StringVar(&f.Bucket, "bucket", f.Bucket, "tc tbf `RATE` of every aggregation uplink (the paper: 200mbit; scaled down for 2 cores)")
	if sub != "run" {
		return
	}
	fs.StringVar(&f.Policy, "policy", f.Policy, "static, crowd or reactive")
	fs.StringVar(&f.Scenario, "scenario", f.Scenario, "s1 (five congesters onto the protected flow's switch) or none")
	fs.DurationVar(&f.Warmup, "warmup", f.Warmup, "protected flow alone before congestion")
	fs.DurationVar(&f.Duration, "duration", f.Duration, "time after congestion starts")
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
