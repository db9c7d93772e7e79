// Package wake is what wakes a machine: for each informer update, whether
// it may change what a machine decides (the parts of a GlusterCluster's or
// GlusterNode's status each machine reads), and which waiting nodes a
// report of another machine ends (states.NodeWaitFor). The dispatcher's
// key mapping (kube/machines/handlers.go) and each room's wiring ask it;
// no machine reads through it.
package wake
