// Package machines wires anthill's machines: Wire builds the informers and
// listers, one syncer per machine and the dispatcher, and registers each
// machine with it; keyMapper (handlers.go) maps informer events to machine
// keys. Each machine has its own room below it — node, heal, cluster,
// upgrade, disruption — holding its syncer (the engine.MachineSyncer the
// sync runner drives): where its cursor lives, what it gathers from
// listers and GD2 into the facts package states decides over, its entry
// effects and its ledger entries. The rooms share three: gather (what
// every machine reads: GD2's bricks and volumes, ownership, failure
// policy, the keys), machinestatus (what every machine writes into its
// status: ledger, conditions, history, and the status writers) and wake
// (which informer updates may change which machine's decision, and which
// waiting nodes a report ends). A machine's room imports no other
// machine's.
//
// LiveNodeDecision and LiveClusterDecision (live_decision.go) run the same
// syncers' gather and decide over informers from the same factories,
// through an admin's clients, for `explain`; nothing acts. The state and
// certificate collectors export the machines' states as metrics.
//
// Gathering only reads: the world is changed by the actions (effects), a
// status only by the runner's status writer (machinestatus/status_writers.go).
// It builds on engine, objects and effects, and does not import operator.
package machines
