// Package transitions holds the action seam of every machine: one
// idempotent action per side-effecting transition event or in-state step,
// written against small consumer-side interfaces (KubeOps, GD2Ops) that
// package kube/effects implements (effects.Kube, effects.GD2). The actions
// of each machine are one table, registered in the one registry
// (Actions, registry.go): events and steps are keyed by their own types.
// The transition tables themselves are data in package states, beside the
// definitions they belong to. It imports fsm and states.
//
// The contract with the sync runner (kube/engine), per sync:
//
//  1. decide (states.Decide*) from freshly gathered facts;
//  2. for an event: look its action up here and run it; on error leave the
//     state unchanged and retry with backoff; on success fire the event on
//     an fsm.Machine and write status (the resumable cursor);
//  3. for a step: look its action up here and run it, then requeue.
//
// Actions never write status: what a step records (the upgrade's next
// batch, a moved brick) is written by the runner's status writer.
//
// Because status is written only after an action succeeds, an operator
// killed between the two re-runs the action on restart. Every action, and
// every interface method it calls, must therefore be idempotent: running it
// twice must leave the world as running it once did. Actions re-check the
// live state they depend on rather than trusting the snapshot where a
// repeated call would be destructive (replace-brick).
package transitions
