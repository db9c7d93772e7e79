package engine

import (
	"time"

	"github.com/gluster/anthill/states"
)

// Ledger is where an object's status keeps the lasting changes its
// machines' actions make, each put on record before the action runs
// (machinestatus.NodeLedger, ClusterLedger): no crash between a change and
// its record can then lose the record, and the record is part of the
// runner's one status write, not a write of its own. What a decision's
// action changes is the decision's (states.Decision.Changes, from the
// machine's change table in states); the ledger only keeps it.
type Ledger[O Object] interface {
	// Note puts changes on record in o's status, a copy the sync writes,
	// each unless o already records it (a step repeated, an action
	// retried after it failed). It reports whether it changed o.
	Note(o O, changes []states.Change, now time.Time) bool
}
