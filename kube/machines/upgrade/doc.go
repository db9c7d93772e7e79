// Package upgrade is the upgrade machine's room: the syncer that takes a
// cluster from one Gluster version to the next in batches, and mirrors
// its state into GD2 metadata.
package upgrade
