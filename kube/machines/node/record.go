package node

import (
	"slices"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/effects"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
	"github.com/gluster/anthill/transitions"
)

// Record lands one outcome in the node's status, then what the sync read
// of the node's GD2 version (recordGD2Version), against the version the
// outcome leaves recorded.
func (s *Syncer) Record(node *operatorv1alpha1.GlusterNode, outs []engine.Outcome[*nodeFacts], now time.Time) {
	s.recordOutcome(node, outs, now)
	if out := outs[0]; out.Kind != engine.Unknown && out.Kind != engine.Refused && out.Facts.version != nil {
		recordGD2Version(node, *out.Facts.version, now)
	}
}

// recordOutcome lands the outcome of the node's decision.
func (s *Syncer) recordOutcome(node *operatorv1alpha1.GlusterNode, outs []engine.Outcome[*nodeFacts], now time.Time) {
	out := &outs[0]
	st := &node.Status
	f := out.Facts
	if f.snap.State != "" {
		// The snapshot was gathered: persist its outage clocks.
		st.DownSince, st.AliveSince = optTime(f.snap.DownSince), optTime(f.snap.AliveSince)
	}
	d := out.Decision
	switch out.Kind {
	case engine.Unknown, engine.Refused:
		return
	case engine.Failed:
		apimeta.SetStatusCondition(&st.Conditions, metav1.Condition{
			Type: operatorv1alpha1.ConditionProgressing, Status: metav1.ConditionFalse, Reason: out.Reason,
			Message: engine.Truncate(out.Message, engine.MaxConditionMessage), ObservedGeneration: node.Generation,
		})
		// A failed brick move leaves an unusable brick on the peers GD2
		// began preparing it on: they are never offered again.
		st.RefusedPeers = states.RefuseAfterFailure(st.RefusedPeers, d.Step, effects.PreparedOn(out.Err))
		return
	case engine.Fired:
		s.enter(node, out, now)
		return
	case engine.Stepped:
		// What the step changes in status is states' (NodeStepEffects).
		eff := states.NodeStepEffects(f.snap, d.Step)
		if m := eff.Moved; m != nil {
			ref := operatorv1alpha1.BrickRef{Volume: m.Volume, Path: m.Path}
			if !slices.Contains(st.MovedBricks, ref) {
				st.MovedBricks = append(st.MovedBricks, ref)
			}
			if !slices.Contains(st.LeftBricks, ref) {
				st.LeftBricks = append(st.LeftBricks, ref)
			}
		}
		for _, r := range eff.HealsStarted {
			st.ReplacementHeals = withReplacementHeal(st.ReplacementHeals, r, now)
		}
		if eff.History {
			st.History = engine.AppendHistory(st.History, out.RecordStep(states.NodeMachine, node, now).Record())
		}
	}
	st.Message = d.Message
	st.ObservedGeneration = node.Generation
	st.State = string(out.To)
	setNodeConditions(node, out.To, d, now)
}

// enter applies a transition's entry effects: the new state and its time,
// the peer a join added, the outage clocks and cursor fields the state
// resets, the history entry and the conditions.
func (s *Syncer) enter(node *operatorv1alpha1.GlusterNode, out *engine.Outcome[*nodeFacts], now time.Time) {
	st := &node.Status
	d := out.Decision
	st.State = string(out.To)
	st.LastTransitionTime = &metav1.Time{Time: now}
	st.Message = d.Message
	st.ObservedGeneration = node.Generation
	if res, ok := out.Learned.(transitions.NodeResult); ok && res.PeerID != "" {
		st.PeerID = res.PeerID
	}
	st.Address = objects.NodeAddress(node)
	meaning := states.NodeMeaning(out.To)
	for _, c := range meaning.ResetOnEntry {
		resetCursor(st, c)
	}
	for _, c := range meaning.StampOnEntry {
		stampCursor(st, c, now)
	}
	if snap := out.Facts.snap; meaning.RecordsVersion {
		// Both are read from the ready pod only.
		if snap.RunningVersion != "" {
			st.Version = snap.RunningVersion
		}
		if snap.PodReady {
			st.Revision = snap.RunningRevision
		}
	}
	st.History = engine.AppendHistory(st.History, out.Committed.Record())
	setNodeConditions(node, out.To, d, now)
}

// resetCursor clears the status field cursor c names.
func resetCursor(st *operatorv1alpha1.GlusterNodeStatus, c states.NodeCursor) {
	switch c {
	case states.CursorDownSince:
		st.DownSince = nil
	case states.CursorAliveSince:
		st.AliveSince = nil
	case states.CursorMovedBricks:
		st.MovedBricks, st.ReplacementHeals = nil, nil
	case states.CursorRefusedPeers:
		st.RefusedPeers = nil
	}
}

// stampCursor sets the clock cursor c names to now unless it is set.
func stampCursor(st *operatorv1alpha1.GlusterNodeStatus, c states.NodeCursor, now time.Time) {
	var t **metav1.Time
	switch c {
	case states.CursorDownSince:
		t = &st.DownSince
	case states.CursorAliveSince:
		t = &st.AliveSince
	default:
		return
	}
	if *t == nil {
		*t = &metav1.Time{Time: now}
	}
}

// withReplacementHeal is heals with r's entry set to now.
func withReplacementHeal(heals []operatorv1alpha1.ReplacementHeal, r states.BrickRef, now time.Time) []operatorv1alpha1.ReplacementHeal {
	out := slices.Clone(heals)
	for i := range out {
		if out[i].Volume == r.Volume && out[i].Path == r.Path {
			out[i].Time = metav1.Time{Time: now}
			return out
		}
	}
	return append(out, operatorv1alpha1.ReplacementHeal{Volume: r.Volume, Path: r.Path, Time: metav1.Time{Time: now}})
}

func optTime(t time.Time) *metav1.Time {
	if t.IsZero() {
		return nil
	}
	return &metav1.Time{Time: t}
}
