package engine

// Log field keys. Every structured log line the operator writes uses these
// constants, so the JSON log stays greppable and stable across releases.
const (
	LogMachine   = "machine"
	LogNamespace = "namespace"
	LogName      = "name"
	LogFrom      = "from"
	LogTo        = "to"
	LogEvent     = "event"
	LogReason    = "reason"
	LogMessage   = "message"
	LogError     = "error"
	LogKey       = "key"
	LogWorkers   = "workers"
	LogAddress   = "address"
	LogIdentity  = "identity"
	LogDuration  = "duration"
	LogSubject   = "subject"
)
