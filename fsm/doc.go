// Package fsm is anthill's generic state-machine engine, built on
// github.com/looplab/fsm: typed states and events, a validated Definition
// per machine, a Machine rebuilt at the persisted state on every sync, and
// Mermaid/Graphviz rendering of a Definition. It is a leaf package.
package fsm
