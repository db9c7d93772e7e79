// Package machinestatus is what every machine room writes into its status
// the same way: the ledger (NodeLedger and ClusterLedger, the
// engine.Ledger the runner puts a decision's changes in before its action
// runs), the Ready, Progressing and Degraded
// conditions, the heal history, the audit names of state mirrors, and the
// status writers, the only code that writes a status (status_writers.go).
// It was named record, which shadowed client-go's tools/record (Events)
// in any file that needed both.
package machinestatus
