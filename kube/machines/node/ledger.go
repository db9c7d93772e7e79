package node

import (
	"time"

	"github.com/gluster/anthill/fsm"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/kube/machines/machinestatus"
	"github.com/gluster/anthill/states"
)

// RecordAhead puts the lasting changes d's action makes (d.Changes, from
// states' change table) on record in the node's status.ledger before the
// action runs (engine.RecordsAhead): the runner writes it, and the action
// runs in the next sync. Nothing is recorded when the node's ledger
// already records the change (machinestatus.NodeLedger).
func (s *Syncer) RecordAhead(node *operatorv1alpha1.GlusterNode, _ engine.Instance[*nodeFacts], d states.Decision, _ fsm.State, now time.Time) bool {
	return machinestatus.NodeLedger{}.Note(node, d.Changes, now)
}
