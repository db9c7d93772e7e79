// Package realgd2 runs real glusterd2 with real bricks on this machine
// (e2e/framework's GD2Pool: one glusterd2 per node in namespaces of its
// own, Debian's glusterfsd and FUSE client, loop-backed XFS bricks) and
// proves what the simulator in gd2/sim can only assume: a replacement
// brick holds the data only after GD2 is made to heal it, and a node
// killed and restarted comes back with its brick and its data. It needs
// root, Debian's glusterfs packages and make gd2 (docs/testing.md, "Real
// glusterd2"); elsewhere its tests skip and say why. Build tag e2e.
package realgd2
