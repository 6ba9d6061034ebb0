package ovsfabric

// OverflowTelemetry lets the integration tests build their telemetry the way
// Experiment.Run does.
var OverflowTelemetry = overflowTelemetry
