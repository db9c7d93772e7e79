// Package operator is the anthill operator process: its configuration
// (Config, filled from the flags of `anthill operator`), the API clients,
// the metrics registry, the HTTP server for /metrics, /healthz and /readyz,
// the JSON logger (NewLogger) and leader election on a Lease. Run wires the
// machines (machines.Wire) and, as leader, runs the dispatcher.
package operator
