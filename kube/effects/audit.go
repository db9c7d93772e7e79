package effects

import (
	"context"
	"sort"

	"go.uber.org/zap"

	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/transitions"
)

// Actions that change configuration, as logged in the action field. Each
// names one call of transitions.KubeOps, GD2Ops or DisruptionKube that
// writes to GD2 or Kubernetes; reads (BrickOnPeer) are not logged.
const (
	ActionEnsureNodeWorkload     = "ensureNodeWorkload"
	ActionRollNodeWorkload       = "rollNodeWorkload"
	ActionLeaveManagementService = "leaveManagementService"
	ActionDeleteNodeWorkload     = "deleteNodeWorkload"
	ActionForceDeleteLostPod     = "forceDeleteLostPod"
	ActionEnsureClusterInfra     = "ensureClusterInfra"
	ActionScaleNodes             = "scaleNodes"
	ActionDeleteNodes            = "deleteNodes"
	ActionDeleteClusterInfra     = "deleteClusterInfra"
	ActionEnsureCSIDrivers       = "ensureCSIDrivers"
	ActionSyncEndpoints          = "syncEndpoints"
	ActionSetCSIVersion          = "setCSIVersion"
	ActionIssueCertificates      = "issueCertificates"
	ActionApplyDisruptionBudgets = "applyDisruptionBudgets"
	ActionAddPeer                = "addPeer"
	ActionRegisterDevice         = "registerDevice"
	ActionSetDeviceEnabled       = "setDeviceEnabled"
	ActionSetPeerMetadata        = "setPeerMetadata"
	ActionReplaceBrick           = "replaceBrick"
	ActionRestorePeerZone        = "restorePeerZone"
	ActionDeletePeer             = "deletePeer"
	ActionTriggerHeal            = "triggerHeal"
	ActionForceStartBricks       = "forceStartBricks"
	ActionHealReplacement        = "healReplacement"
	ActionSetVolumeMetadata      = "setVolumeMetadata"
	ActionSetClusterOptions      = "setClusterOptions"
)

// Audit logs every configuration-altering call an action makes: one JSON
// line "configuration change" with the action, the objects and GD2 ids it
// names, the outcome, and — from the engine.ActionContext the runner put
// in the context — the machine, object, state, event or step and reason.
// Each call is logged twice: outcome "started" before it is made, and "ok"
// or "failed" after it returns, failed calls included (a failed GD2
// transaction may have changed something before it failed). The first
// line makes the trail survive a crash: a change made just before the
// process died, whose second line was never written, is still announced.
type Audit struct {
	Log *zap.Logger
}

// Ops wraps both sides of ops.
func (a Audit) Ops(ops transitions.Ops) transitions.Ops {
	out := ops
	if ops.Kube != nil {
		out.Kube = auditKube{next: ops.Kube, a: a}
	}
	if ops.GD2 != nil {
		out.GD2 = auditGD2{next: ops.GD2, a: a}
	}
	return out
}

// Disruption wraps the disruption machine's side.
func (a Audit) Disruption(k transitions.DisruptionKube) transitions.DisruptionKube {
	return auditDisruption{next: k, a: a}
}

// MessageConfigurationChange is the message of every audit line.
const MessageConfigurationChange = "configuration change"

// Outcomes of an audit line.
const (
	OutcomeStarted = "started"
	OutcomeOK      = "ok"
	OutcomeFailed  = "failed"
)

// call logs the started line, makes the call, and logs how it ended.
func (a Audit) call(ctx context.Context, action string, f func() error, fields ...zap.Field) error {
	a.log(ctx, action, OutcomeStarted, nil, fields...)
	err := f()
	a.log(ctx, action, "", err, fields...)
	return err
}

// log writes one line; an empty outcome means "ok" or "failed" by err.
func (a Audit) log(ctx context.Context, action, outcome string, err error, fields ...zap.Field) {
	if a.Log == nil {
		return
	}
	fs := []zap.Field{zap.String(engine.LogAction, action)}
	if ac, ok := engine.ActionFrom(ctx); ok {
		fs = append(fs, ac.Fields()...)
	}
	fs = append(fs, fields...)
	switch {
	case outcome != "":
		fs = append(fs, zap.String(engine.LogOutcome, outcome))
	case err != nil:
		fs = append(fs, zap.String(engine.LogOutcome, OutcomeFailed), zap.Error(err))
		a.Log.Warn(MessageConfigurationChange, fs...)
		return
	default:
		fs = append(fs, zap.String(engine.LogOutcome, OutcomeOK))
	}
	a.Log.Info(MessageConfigurationChange, fs...)
}

func nodeFields(n transitions.NodeTarget) []zap.Field {
	return []zap.Field{zap.String(engine.LogNode, n.NodeKey()), zap.String(engine.LogCluster, n.Cluster), zap.String(engine.LogPeer, n.PeerID)}
}

func clusterFields(c transitions.ClusterTarget) []zap.Field {
	return []zap.Field{zap.String(engine.LogCluster, c.Namespace+"/"+c.Name)}
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

type auditKube struct {
	next transitions.KubeOps
	a    Audit
}

func (k auditKube) EnsureNodeWorkload(ctx context.Context, n transitions.NodeTarget) error {
	return k.a.call(ctx, ActionEnsureNodeWorkload, func() error { return k.next.EnsureNodeWorkload(ctx, n) }, nodeFields(n)...)
}

func (k auditKube) RollNodeWorkload(ctx context.Context, n transitions.NodeTarget, version string) error {
	return k.a.call(ctx, ActionRollNodeWorkload, func() error { return k.next.RollNodeWorkload(ctx, n, version) }, append(nodeFields(n), zap.String(engine.LogVersion, version))...)
}

func (k auditKube) LeaveManagementService(ctx context.Context, n transitions.NodeTarget) error {
	return k.a.call(ctx, ActionLeaveManagementService, func() error { return k.next.LeaveManagementService(ctx, n) }, nodeFields(n)...)
}

func (k auditKube) DeleteNodeWorkload(ctx context.Context, n transitions.NodeTarget) error {
	return k.a.call(ctx, ActionDeleteNodeWorkload, func() error { return k.next.DeleteNodeWorkload(ctx, n) }, nodeFields(n)...)
}

func (k auditKube) ForceDeleteLostPod(ctx context.Context, n transitions.NodeTarget) error {
	return k.a.call(ctx, ActionForceDeleteLostPod, func() error { return k.next.ForceDeleteLostPod(ctx, n) }, append(nodeFields(n), zap.String(engine.LogPod, n.LostPodUID))...)
}

func (k auditKube) EnsureClusterInfra(ctx context.Context, c transitions.ClusterTarget) error {
	return k.a.call(ctx, ActionEnsureClusterInfra, func() error { return k.next.EnsureClusterInfra(ctx, c) }, clusterFields(c)...)
}

func (k auditKube) ScaleNodes(ctx context.Context, c transitions.ClusterTarget, desired int) error {
	return k.a.call(ctx, ActionScaleNodes, func() error { return k.next.ScaleNodes(ctx, c, desired) }, append(clusterFields(c), zap.Int(engine.LogDesired, desired))...)
}

func (k auditKube) DeleteNodes(ctx context.Context, c transitions.ClusterTarget) error {
	return k.a.call(ctx, ActionDeleteNodes, func() error { return k.next.DeleteNodes(ctx, c) }, clusterFields(c)...)
}

func (k auditKube) DeleteClusterInfra(ctx context.Context, c transitions.ClusterTarget) error {
	return k.a.call(ctx, ActionDeleteClusterInfra, func() error { return k.next.DeleteClusterInfra(ctx, c) }, clusterFields(c)...)
}

func (k auditKube) EnsureCSIDrivers(ctx context.Context, c transitions.ClusterTarget) error {
	return k.a.call(ctx, ActionEnsureCSIDrivers, func() error { return k.next.EnsureCSIDrivers(ctx, c) }, clusterFields(c)...)
}

func (k auditKube) SyncEndpoints(ctx context.Context, c transitions.ClusterTarget) error {
	return k.a.call(ctx, ActionSyncEndpoints, func() error { return k.next.SyncEndpoints(ctx, c) }, clusterFields(c)...)
}

func (k auditKube) SetCSIVersion(ctx context.Context, c transitions.ClusterTarget, version string) error {
	return k.a.call(ctx, ActionSetCSIVersion, func() error { return k.next.SetCSIVersion(ctx, c, version) }, append(clusterFields(c), zap.String(engine.LogVersion, version))...)
}

// IssueCertificates is logged without any certificate or key: only the
// cluster it issued for.
func (k auditKube) IssueCertificates(ctx context.Context, c transitions.ClusterTarget) error {
	return k.a.call(ctx, ActionIssueCertificates, func() error { return k.next.IssueCertificates(ctx, c) }, clusterFields(c)...)
}

type auditGD2 struct {
	next transitions.GD2Ops
	a    Audit
}

func (g auditGD2) AddPeer(ctx context.Context, address, zone string, metadata map[string]string) (string, error) {
	fs := []zap.Field{zap.String(engine.LogAddress, address), zap.String(engine.LogZone, zone)}
	g.a.log(ctx, ActionAddPeer, OutcomeStarted, nil, fs...)
	id, err := g.next.AddPeer(ctx, address, zone, metadata)
	g.a.log(ctx, ActionAddPeer, "", err, append(fs, zap.String(engine.LogPeer, id))...)
	return id, err
}

func (g auditGD2) RegisterDevice(ctx context.Context, peerID, device, provisioner string) error {
	return g.a.call(ctx, ActionRegisterDevice, func() error { return g.next.RegisterDevice(ctx, peerID, device, provisioner) }, zap.String(engine.LogPeer, peerID), zap.String(engine.LogDevice, device))
}

func (g auditGD2) SetDeviceEnabled(ctx context.Context, peerID, device string, enabled bool) error {
	return g.a.call(ctx, ActionSetDeviceEnabled, func() error { return g.next.SetDeviceEnabled(ctx, peerID, device, enabled) }, zap.String(engine.LogPeer, peerID), zap.String(engine.LogDevice, device), zap.Bool(engine.LogEnabled, enabled))
}

func (g auditGD2) SetPeerMetadata(ctx context.Context, peerID string, md map[string]string) error {
	return g.a.call(ctx, ActionSetPeerMetadata, func() error { return g.next.SetPeerMetadata(ctx, peerID, md) }, zap.String(engine.LogPeer, peerID), zap.Strings(engine.LogKeys, keys(md)))
}

// BrickOnPeer only reads.
func (g auditGD2) BrickOnPeer(ctx context.Context, volume, peerID, path string) (bool, error) {
	return g.next.BrickOnPeer(ctx, volume, peerID, path)
}

func (g auditGD2) ReplaceBrick(ctx context.Context, volume, srcPeerID, path string, to transitions.MoveTo) error {
	return g.a.call(ctx, ActionReplaceBrick, func() error { return g.next.ReplaceBrick(ctx, volume, srcPeerID, path, to) },
		zap.String(engine.LogVolume, volume), zap.String(engine.LogPeer, srcPeerID),
		zap.String(engine.LogBrick, path), zap.Strings(engine.LogTargetPeers, to.Peers), zap.Bool(engine.LogSameZone, to.SameZone))
}

func (g auditGD2) RestorePeerZone(ctx context.Context, peerID string) error {
	return g.a.call(ctx, ActionRestorePeerZone, func() error { return g.next.RestorePeerZone(ctx, peerID) }, zap.String(engine.LogPeer, peerID))
}

func (g auditGD2) DeletePeer(ctx context.Context, peerID string) error {
	return g.a.call(ctx, ActionDeletePeer, func() error { return g.next.DeletePeer(ctx, peerID) }, zap.String(engine.LogPeer, peerID))
}

func (g auditGD2) TriggerHeal(ctx context.Context, volume string) error {
	return g.a.call(ctx, ActionTriggerHeal, func() error { return g.next.TriggerHeal(ctx, volume) }, zap.String(engine.LogVolume, volume))
}

func (g auditGD2) ForceStartBricks(ctx context.Context, volume string) error {
	return g.a.call(ctx, ActionForceStartBricks, func() error { return g.next.ForceStartBricks(ctx, volume) }, zap.String(engine.LogVolume, volume))
}

func (g auditGD2) HealReplacement(ctx context.Context, volume string) error {
	return g.a.call(ctx, ActionHealReplacement, func() error { return g.next.HealReplacement(ctx, volume) }, zap.String(engine.LogVolume, volume))
}

func (g auditGD2) SetVolumeMetadata(ctx context.Context, volume string, md map[string]string) error {
	return g.a.call(ctx, ActionSetVolumeMetadata, func() error { return g.next.SetVolumeMetadata(ctx, volume, md) }, zap.String(engine.LogVolume, volume), zap.Strings(engine.LogKeys, keys(md)))
}

func (g auditGD2) SetClusterOptions(ctx context.Context, options map[string]string) error {
	return g.a.call(ctx, ActionSetClusterOptions, func() error { return g.next.SetClusterOptions(ctx, options) }, zap.Strings(engine.LogKeys, keys(options)))
}

type auditDisruption struct {
	next transitions.DisruptionKube
	a    Audit
}

func (d auditDisruption) ApplyDisruptionBudgets(ctx context.Context, t transitions.DisruptionTarget) error {
	return d.a.call(ctx, ActionApplyDisruptionBudgets, func() error { return d.next.ApplyDisruptionBudgets(ctx, t) }, zap.String(engine.LogCluster, t.Namespace+"/"+t.Cluster), zap.String(engine.LogZone, t.OpenZone))
}
