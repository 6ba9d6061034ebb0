package main

// commands lists every subcommand. Torch-tagged builds add train through
// torchCommands; collect and probe are pure Go.
func commands() []command {
	cs := []command{evaluateCommand(), boundCommand(), floorCommand(), collectCommand(), probeCommand(), calibrateCommand(), profileCommand(), demoCommand(), sensitivityCommand(), gateCommand(), tcstatCommand(), hostagentCommand(), fabricCommand(), serveCommand(), traceCommand(), reserveCommand(), versionCommand()}
	return append(cs, torchCommands()...)
}
