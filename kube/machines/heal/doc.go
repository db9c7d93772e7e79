// Package heal is the heal machine's room: the syncer that reads every
// volume of a cluster concurrently, tracks each replica set's heal, and
// triggers heals and starts bricks GD2 left offline, with its back-off
// and the per-volume metrics.
package heal
