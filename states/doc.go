// Package states holds, one file per machine, the typed states and events of
// every anthill machine with their documentation, the Snapshot each machine
// decides from, and pure decision functions over it. It imports only fsm.
//
// The split follows "gather, decide, act": the sync runner (kube/engine)
// has a machine's spec gather a Snapshot from listers and GD2 reads (plain
// data, no client types), a Decide function here turns it into at most one
// Decision, and the runner runs the decided event's action (package
// transitions) before firing the event on an fsm.Machine and writing
// status. Decide functions never do I/O and never
// read the clock — Snapshot.Now is the only time they know — so every branch
// is a table test.
//
// The data-safety policies the gatherer applies while it gathers live here
// too, over plain fact structs: which copy of a replica set is healed, which
// brick may move and what would lose quorum (AnalyzePeer over VolumeFacts,
// bricks.go), where a brick may go (PlanMove and ClashPeers over PeerFacts
// and DeviceFacts, brick_placement.go), which brick a drain moves first and
// which peers it never offers again after a failed move (NextMove over
// DrainFacts, RefuseAfterFailure; move_order.go), whether a lost pod's
// storage may follow a forced delete (LostPodStorage over PodVolumeFacts,
// node_loss.go), which node leaves first on scale-down, how many nodes each
// template gets and which templates gain nodes (ScaleDownOrder,
// TemplateTargets, PlanScale; scale.go), which nodes upgrade together
// (NextBatch, upgrade_batch.go), and how a cluster's nodes are counted
// (CountNodes over NodeFacts, node_facts.go). The gatherer in kube/machines
// only converts listers' objects and GD2 answers into these facts.
//
// What each state means outside its own machine is data next to the
// machine, one entry per state, checked exhaustively by the tests:
// NodeMeaning (how a node counts, whether it may receive bricks, its
// conditions, what its decision reads, which status cursors entering it
// resets; node_meaning.go), ClusterMeaning and UpgradeMeaning (the
// conditions of a phase).
//
// The full documentation of each state and event lives in the machine's
// Definition (and from there in docs/fsm); the Go comments on the constants
// are short summaries of the same contract.
package states
