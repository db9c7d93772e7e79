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
	ActionSetVolumeMetadata      = "setVolumeMetadata"
	ActionSetClusterOptions      = "setClusterOptions"
)

// Audit logs every configuration-altering call an action makes: one JSON
// line "configuration change" with the action, the objects and GD2 ids it
// names, the outcome, and — from the engine.ActionContext the runner put
// in the context — the machine, object, state, event or step and reason.
// The line is written after the call returns, failed calls included (a
// failed GD2 transaction may have changed something before it failed).
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

func (a Audit) log(ctx context.Context, action string, err error, fields ...zap.Field) {
	if a.Log == nil {
		return
	}
	fs := []zap.Field{zap.String(engine.LogAction, action)}
	if ac, ok := engine.ActionFrom(ctx); ok {
		fs = append(fs, ac.Fields()...)
	}
	fs = append(fs, fields...)
	if err != nil {
		fs = append(fs, zap.String(engine.LogOutcome, "failed"), zap.Error(err))
		a.Log.Warn(MessageConfigurationChange, fs...)
		return
	}
	fs = append(fs, zap.String(engine.LogOutcome, "ok"))
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
	err := k.next.EnsureNodeWorkload(ctx, n)
	k.a.log(ctx, ActionEnsureNodeWorkload, err, nodeFields(n)...)
	return err
}

func (k auditKube) RollNodeWorkload(ctx context.Context, n transitions.NodeTarget, version string) error {
	err := k.next.RollNodeWorkload(ctx, n, version)
	k.a.log(ctx, ActionRollNodeWorkload, err, append(nodeFields(n), zap.String(engine.LogVersion, version))...)
	return err
}

func (k auditKube) LeaveManagementService(ctx context.Context, n transitions.NodeTarget) error {
	err := k.next.LeaveManagementService(ctx, n)
	k.a.log(ctx, ActionLeaveManagementService, err, nodeFields(n)...)
	return err
}

func (k auditKube) DeleteNodeWorkload(ctx context.Context, n transitions.NodeTarget) error {
	err := k.next.DeleteNodeWorkload(ctx, n)
	k.a.log(ctx, ActionDeleteNodeWorkload, err, nodeFields(n)...)
	return err
}

func (k auditKube) ForceDeleteLostPod(ctx context.Context, n transitions.NodeTarget) error {
	err := k.next.ForceDeleteLostPod(ctx, n)
	k.a.log(ctx, ActionForceDeleteLostPod, err, append(nodeFields(n), zap.String(engine.LogPod, n.LostPodUID))...)
	return err
}

func (k auditKube) EnsureClusterInfra(ctx context.Context, c transitions.ClusterTarget) error {
	err := k.next.EnsureClusterInfra(ctx, c)
	k.a.log(ctx, ActionEnsureClusterInfra, err, clusterFields(c)...)
	return err
}

func (k auditKube) ScaleNodes(ctx context.Context, c transitions.ClusterTarget, desired int) error {
	err := k.next.ScaleNodes(ctx, c, desired)
	k.a.log(ctx, ActionScaleNodes, err, append(clusterFields(c), zap.Int(engine.LogDesired, desired))...)
	return err
}

func (k auditKube) DeleteNodes(ctx context.Context, c transitions.ClusterTarget) error {
	err := k.next.DeleteNodes(ctx, c)
	k.a.log(ctx, ActionDeleteNodes, err, clusterFields(c)...)
	return err
}

func (k auditKube) DeleteClusterInfra(ctx context.Context, c transitions.ClusterTarget) error {
	err := k.next.DeleteClusterInfra(ctx, c)
	k.a.log(ctx, ActionDeleteClusterInfra, err, clusterFields(c)...)
	return err
}

func (k auditKube) EnsureCSIDrivers(ctx context.Context, c transitions.ClusterTarget) error {
	err := k.next.EnsureCSIDrivers(ctx, c)
	k.a.log(ctx, ActionEnsureCSIDrivers, err, clusterFields(c)...)
	return err
}

func (k auditKube) SyncEndpoints(ctx context.Context, c transitions.ClusterTarget) error {
	err := k.next.SyncEndpoints(ctx, c)
	k.a.log(ctx, ActionSyncEndpoints, err, clusterFields(c)...)
	return err
}

func (k auditKube) SetCSIVersion(ctx context.Context, c transitions.ClusterTarget, version string) error {
	err := k.next.SetCSIVersion(ctx, c, version)
	k.a.log(ctx, ActionSetCSIVersion, err, append(clusterFields(c), zap.String(engine.LogVersion, version))...)
	return err
}

// IssueCertificates is logged without any certificate or key: only the
// cluster it issued for.
func (k auditKube) IssueCertificates(ctx context.Context, c transitions.ClusterTarget) error {
	err := k.next.IssueCertificates(ctx, c)
	k.a.log(ctx, ActionIssueCertificates, err, clusterFields(c)...)
	return err
}

type auditGD2 struct {
	next transitions.GD2Ops
	a    Audit
}

func (g auditGD2) AddPeer(ctx context.Context, address, zone string, metadata map[string]string) (string, error) {
	id, err := g.next.AddPeer(ctx, address, zone, metadata)
	g.a.log(ctx, ActionAddPeer, err, zap.String(engine.LogAddress, address), zap.String(engine.LogZone, zone), zap.String(engine.LogPeer, id))
	return id, err
}

func (g auditGD2) RegisterDevice(ctx context.Context, peerID, device string) error {
	err := g.next.RegisterDevice(ctx, peerID, device)
	g.a.log(ctx, ActionRegisterDevice, err, zap.String(engine.LogPeer, peerID), zap.String(engine.LogDevice, device))
	return err
}

func (g auditGD2) SetDeviceEnabled(ctx context.Context, peerID, device string, enabled bool) error {
	err := g.next.SetDeviceEnabled(ctx, peerID, device, enabled)
	g.a.log(ctx, ActionSetDeviceEnabled, err, zap.String(engine.LogPeer, peerID), zap.String(engine.LogDevice, device), zap.Bool(engine.LogEnabled, enabled))
	return err
}

func (g auditGD2) SetPeerMetadata(ctx context.Context, peerID string, md map[string]string) error {
	err := g.next.SetPeerMetadata(ctx, peerID, md)
	g.a.log(ctx, ActionSetPeerMetadata, err, zap.String(engine.LogPeer, peerID), zap.Strings(engine.LogKeys, keys(md)))
	return err
}

// BrickOnPeer only reads.
func (g auditGD2) BrickOnPeer(ctx context.Context, volume, peerID, path string) (bool, error) {
	return g.next.BrickOnPeer(ctx, volume, peerID, path)
}

func (g auditGD2) ReplaceBrick(ctx context.Context, volume, srcPeerID, path string, to transitions.MoveTo) error {
	err := g.next.ReplaceBrick(ctx, volume, srcPeerID, path, to)
	g.a.log(ctx, ActionReplaceBrick, err, zap.String(engine.LogVolume, volume), zap.String(engine.LogPeer, srcPeerID),
		zap.String(engine.LogBrick, path), zap.Strings(engine.LogTargetPeers, to.Peers), zap.Bool(engine.LogSameZone, to.SameZone))
	return err
}

func (g auditGD2) RestorePeerZone(ctx context.Context, peerID string) error {
	err := g.next.RestorePeerZone(ctx, peerID)
	g.a.log(ctx, ActionRestorePeerZone, err, zap.String(engine.LogPeer, peerID))
	return err
}

func (g auditGD2) DeletePeer(ctx context.Context, peerID string) error {
	err := g.next.DeletePeer(ctx, peerID)
	g.a.log(ctx, ActionDeletePeer, err, zap.String(engine.LogPeer, peerID))
	return err
}

func (g auditGD2) TriggerHeal(ctx context.Context, volume string) error {
	err := g.next.TriggerHeal(ctx, volume)
	g.a.log(ctx, ActionTriggerHeal, err, zap.String(engine.LogVolume, volume))
	return err
}

func (g auditGD2) SetVolumeMetadata(ctx context.Context, volume string, md map[string]string) error {
	err := g.next.SetVolumeMetadata(ctx, volume, md)
	g.a.log(ctx, ActionSetVolumeMetadata, err, zap.String(engine.LogVolume, volume), zap.Strings(engine.LogKeys, keys(md)))
	return err
}

func (g auditGD2) SetClusterOptions(ctx context.Context, options map[string]string) error {
	err := g.next.SetClusterOptions(ctx, options)
	g.a.log(ctx, ActionSetClusterOptions, err, zap.Strings(engine.LogKeys, keys(options)))
	return err
}

type auditDisruption struct {
	next transitions.DisruptionKube
	a    Audit
}

func (d auditDisruption) ApplyDisruptionBudgets(ctx context.Context, t transitions.DisruptionTarget) error {
	err := d.next.ApplyDisruptionBudgets(ctx, t)
	d.a.log(ctx, ActionApplyDisruptionBudgets, err, zap.String(engine.LogCluster, t.Namespace+"/"+t.Cluster), zap.String(engine.LogZone, t.OpenZone))
	return err
}
