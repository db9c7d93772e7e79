// Package gather is what every machine room reads the same way: GD2's
// bricks, volumes and heal-info as facts (bricks.go), which peers and
// volumes a cluster owns, its failure policy, the PersistentVolumes a
// cluster's volumes back, and the dispatcher keys of each machine.
// It only reads.
package gather
