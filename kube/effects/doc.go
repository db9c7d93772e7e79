// Package effects is where anthill writes to, and reads live from, the
// world outside its informers: Kube implements transitions.KubeOps (and
// transitions.DisruptionKube) against the Kubernetes API, GD2 implements
// transitions.GD2Ops with a GD2 client, and NoGD2 stands in for GD2 before
// a cluster has a client. It also holds the GD2 clients per cluster and
// node (GD2Clients, with failover across an external pool's addresses),
// the classification of GD2's refusals into condition reasons, the
// finalizer helpers, and CSIReader, which reads the CSI node plugins an
// upgrade rolls.
//
// Actions never write status: that is the machines' status writers' job.
// It builds on objects and engine, and imports neither machines nor
// operator.
package effects
