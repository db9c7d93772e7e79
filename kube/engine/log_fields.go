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
	LogSubject   = "subject"
	// LogState is the state an action ran in, LogStep the event or step
	// it acted on.
	LogState = "state"
	LogStep  = "step"
	// LogAction names a configuration-altering call (replaceBrick,
	// deletePeer, ...); LogOutcome is "started" (before the call), "ok"
	// or "failed" (after it).
	LogAction  = "action"
	LogOutcome = "outcome"
	// GD2 ids and Kubernetes objects an action names.
	LogCluster     = "cluster"
	LogPeer        = "peer"
	LogVolume      = "volume"
	LogBrick       = "brick"
	LogTargetPeers = "targetPeers"
	LogSameZone    = "sameZone"
	LogDevice      = "device"
	LogEnabled     = "enabled"
	LogZone        = "zone"
	LogVersion     = "version"
	LogDesired     = "desired"
	LogNode        = "node"
	LogPod         = "pod"
	LogKeys        = "keys"
)
