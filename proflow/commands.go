package main

// commands lists every subcommand. Torch-tagged builds add train through
// torchCommands.
func commands() []command {
	cs := []command{evaluateCommand(), calibrateCommand(), tcstatCommand(), fabricCommand()}
	return append(cs, torchCommands()...)
}
