package heal

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/gluster/anthill/fsm"
	"github.com/gluster/anthill/gd2"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/kube/machines/machinestatus"
	"github.com/gluster/anthill/states"
	"github.com/gluster/anthill/transitions"
)

// mirror writes each volume's heal state, as now persisted in
// status.volumes, into the volume's GD2 metadata (MetaHealState,
// MetaHealSince) where the volume read this sync does not already carry
// it. It runs after the status write, so GD2 never shows a state that
// status does not hold; only volumes in status.volumes (the cluster's own,
// seen in GD2 this sync) are written. A failure is logged and repaired by
// the next sync, which compares again; it never fails the sync.
func (s *Syncer) mirror(ctx context.Context, key engine.Key, ops transitions.GD2Ops, readings []healReading, entries []operatorv1alpha1.VolumeStatus) {
	seen := make(map[string]gd2.Volume, len(readings))
	for _, r := range readings {
		seen[r.vol.Name] = r.vol
	}
	var errs []error
	for _, e := range entries {
		v, ok := seen[e.Name]
		if !ok || !healDef.HasState(fsm.State(e.State)) {
			continue
		}
		var since time.Time
		if e.LastTransitionTime != nil {
			since = e.LastTransitionTime.Time
		}
		md := transitions.HealMetadata(fsm.State(e.State), since)
		if transitions.HealMetadataCurrent(v.Metadata, md) {
			continue
		}
		if !transitions.MetadataFits(v.Metadata, md) {
			errs = append(errs, fmt.Errorf("volume %s: its metadata leaves no room for %v within GD2's %d bytes", e.Name, md, transitions.MetadataLimit))
			continue
		}
		actx := engine.WithAction(ctx, engine.ActionContext{
			Machine: states.HealMachine, Namespace: key.Namespace, Name: key.Name, Subject: e.Name, State: e.State, Action: machinestatus.ActionMirror, Reason: machinestatus.ReasonMirror,
		})
		if err := transitions.MirrorHealState(actx, s.Audit.Ops(transitions.Ops{GD2: ops}).GD2, e.Name, md); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		s.log(key).Info("mirroring heal state into GD2 failed; retrying next sync", zap.Error(errors.Join(errs...)))
	}
}
