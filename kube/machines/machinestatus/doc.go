// Package machinestatus is what every machine room writes into its status
// the same way: the ledger (entries put on record before an action runs,
// see engine.RecordsAhead), the Ready, Progressing and Degraded
// conditions, the heal history, the audit names of state mirrors, and the
// status writers, the only code that writes a status (status_writers.go).
// It was named record, which shadowed client-go's tools/record (Events)
// in any file that needed both.
package machinestatus
