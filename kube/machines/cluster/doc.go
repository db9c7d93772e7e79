// Package cluster is the cluster machine's room: the syncer of a
// GlusterCluster from Pending to Deleted — infrastructure, CSI drivers,
// options, scaling and the autoscaler, capacity, external endpoints — and
// the deletion preview `kubectl gluster delete` prints.
package cluster
