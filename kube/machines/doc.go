// Package machines holds, per machine, the syncer the engine's sync runner
// drives (NodeSyncer, ClusterSyncer, UpgradeSyncer, HealSyncer,
// DisruptionSyncer): where its cursor lives, what it gathers from listers
// and GD2 into the facts package states decides over, its entry effects
// and its status writer. It also maps informer events to machine keys
// (handlers.go) and wires it all: Wire builds the informers and listers,
// the syncers and the dispatcher, and registers each machine with it.
// LiveNodeDecision and LiveClusterDecision (live_decision.go) run the same
// syncers' gather and decide over informers from the same factories, through
// an admin's clients, for `explain`; nothing acts. The ledger (ledger.go)
// is part of the status each runner writes: a syncer's RecordAhead puts a
// change on record before its action runs (engine.RecordsAhead), a node's
// in its own status, copied into its cluster's by the cluster machine.
//
// Gathering only reads: the world is changed by the actions (effects), a
// status only by the runner's status writer (status_writers.go).
// It builds on engine, objects and effects, and does not import operator.
package machines
