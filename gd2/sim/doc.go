// Package sim is a GlusterD2 REST simulator. It serves the same routes,
// bodies, status codes and quirks as a real GD2 (see the GD2 REST fact sheet
// the project keeps), so the operator and every test talk to it over real
// HTTP exactly as they would talk to GD2.
//
// The simulator models a set of hosts (GD2 processes) of which some are
// members of the one simulated cluster. A request's Host header picks the
// GD2 that serves it: a simulated host's name (first DNS label) addresses
// that host, anything else reaches a random serving member, as a
// load-balanced Service does (see serving.go). Refusals come first: the v1
// transactions' liveness gate, option validation as txn-step errors,
// replace-brick sized on the serving node and named 0-based, exact-address
// peer duplicates. Time-dependent behaviour (heal backlog growth and drain, rebalance
// progress) is evaluated lazily against an injectable clock, so tests drive
// it with a fake clock and never sleep.
//
// Beside the GD2 routes, /sim/... admin routes (unauthenticated, not part of
// GD2) flip peer liveness, inject writes, split-brain and faults, and expose
// the invariant checker's violations: management operations that lost or
// endangered data.
//
// The package deliberately does not import the gd2 client package: its wire
// structs are written independently from the fact sheet, so the contract
// suite can catch disagreements between the two sides.
package sim
