package main

// commands lists every subcommand. Torch-tagged builds add train and probe
// through torchCommands.
func commands() []command {
	cs := []command{evaluateCommand(), tcstatCommand(), fabricCommand()}
	return append(cs, torchCommands()...)
}
