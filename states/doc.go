// Package states holds, one file per machine, the typed states of every
// anthill machine with their documentation, the Snapshot each machine decides
// from, and pure decision functions over it. It imports only fsm.
package states
