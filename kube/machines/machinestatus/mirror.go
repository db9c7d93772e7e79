package machinestatus

// ActionMirror and ReasonMirror name, in the audit log, the writes that
// mirror a persisted state into GD2 metadata after a status write.
const (
	ActionMirror = "mirrorState"
	ReasonMirror = "StateMirrored"
)
