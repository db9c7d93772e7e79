// Package fsm is anthill's generic state-machine engine, built on
// github.com/looplab/fsm: typed states and events, a validated Definition
// per machine, a Machine rebuilt at the persisted state on every sync, and
// Mermaid, Graphviz and Markdown rendering of a Definition. It is a leaf
// package: it imports only the standard library and looplab/fsm.
//
// The engine deliberately knows nothing about Kubernetes or GD2. The state
// lives in custom-resource status; a Machine is a throw-away view of one
// persisted state that answers "may this event fire here?" and computes the
// target. Deciding which event to fire happens in pure functions elsewhere,
// and side effects run before Fire commits, never inside looplab callbacks
// (this package registers none).
//
// Two kinds of named events exist in a Definition:
//
//   - Transitions move the machine from one state to another. Self-loops are
//     rejected by Validate: looplab reports a same-state event as
//     NoTransitionError, and a "transition" that changes nothing would only
//     add noise to the transition log and metrics.
//   - Steps are idempotent pieces of work performed inside a state without
//     leaving it (moving one brick while Draining, selecting the next node
//     while RollingServers). They are documented beside the transitions so
//     that every side effect an operator may take is listed, but they are not
//     drawn as edges.
package fsm
