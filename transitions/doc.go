// Package transitions holds each machine's transition table as data and one
// idempotent action per side-effecting event, written against small
// consumer-side interfaces (KubeOps, GD2Ops). It imports fsm and states.
package transitions
