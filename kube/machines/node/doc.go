// Package node is the node machine's room: the syncer of a GlusterNode
// (one Gluster server) from Provisioning to Deleted, its gathering from
// listers and GD2 (snapshot.go), its ledger entries, what it records in
// the node's status, the peer watch that follows GD2 liveness, and the
// drain preview `kubectl gluster node decommission` prints.
package node
