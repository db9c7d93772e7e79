package kube

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/clock"

	"github.com/gluster/anthill/fsm"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/client/clientset/versioned"
	listers "github.com/gluster/anthill/kube/client/listers/operator/v1alpha1"
	"github.com/gluster/anthill/states"
	"github.com/gluster/anthill/transitions"
)

// Upgrade defaults.
const (
	// DefaultHealTimeout bounds one upgrade step (a node's restart and
	// heal, or the client roll) when upgradePolicy.healTimeout is unset.
	DefaultHealTimeout = time.Hour
	// DefaultUpgradeCompleteHold is how long Complete is shown before the
	// machine settles to Idle.
	DefaultUpgradeCompleteHold = 5 * time.Minute
)

// ConditionUpgrade on a GlusterCluster is True while an upgrade rolls and
// False, with the reason, while it is Blocked or Paused; it is removed
// when the machine is Idle.
const ConditionUpgrade = "Upgrading"

var upgradeDef = states.UpgradeDefinition()

// UpgradeSyncer advances the upgrade machine of one GlusterCluster per
// sync; the key is (upgrade, namespace, cluster). The machine is persisted
// in status.upgrade. It only decides and records: which node is upgraded
// now (status.upgrade.currentNode), and the CSI client version. Each node's
// own machine stops, restarts and heals it, re-reading GD2 live before it
// stops anything.
type UpgradeSyncer struct {
	fence    writeFence
	upMirror upgradeMirror

	Clusters listers.GlusterClusterLister
	Nodes    listers.GlusterNodeLister
	CSI      csiReader
	Anthill  versioned.Interface
	Kube     transitions.KubeOps
	// GD2 mirrors the machine's state onto the cluster's peers
	// (transitions.MetaUpgrade); nil mirrors nothing.
	GD2   *GD2Clients
	Log   *TransitionLog
	Clock clock.Clock
}

// Sync runs one decision of the upgrade machine of the cluster named by key.
func (s *UpgradeSyncer) Sync(ctx context.Context, key Key) (Result, error) {
	cached, err := s.Clusters.GlusterClusters(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		s.forgetMirror(key)
		return Result{}, nil
	}
	if err != nil {
		return Result{}, err
	}
	if s.fence.behind(key, cached.ResourceVersion) {
		return Result{RequeueAfter: fenceRetry}, nil
	}
	// The servers of an external pool are upgraded by its own admins, and a
	// cluster being deleted is not upgraded any further.
	if cached.DeletionTimestamp != nil || cached.Spec.Mode == operatorv1alpha1.ClusterModeExternal {
		return Result{}, nil
	}
	c := cached.DeepCopy()
	if c.Status.Upgrade == nil {
		c.Status.Upgrade = &operatorv1alpha1.UpgradeStatus{}
	}
	up := c.Status.Upgrade
	state := fsm.State(cmp.Or(up.State, string(upgradeDef.Initial)))
	m, err := upgradeDef.NewMachine(state)
	if err != nil {
		return Result{}, clusterStateUnknown(ctx, s.Anthill, s.Log, c, err)
	}
	snap, err := s.snapshot(ctx, c, state)
	if err != nil {
		return Result{}, err
	}
	d := states.DecideUpgrade(snap)
	target := transitions.ClusterTarget{Namespace: c.Namespace, Name: c.Name, TargetVersion: snap.ActiveTarget}
	run := func(e fsm.Event, st fsm.Step) error {
		if st == states.UpgradeSelectNextNode {
			return s.Kube.(*KubeOps).SelectNodesForUpgrade(ctx, target, snap.NextNodes, snap.ActiveTarget)
		}
		if a, ok := lookup(transitions.UpgradeActions, e, st); ok {
			return a(ctx, transitions.Ops{Kube: s.Kube, GD2: noGD2{}}, target)
		}
		return nil
	}
	did, tr, err := applyDecision(ctx, m, d, run, func(reason, msg string) { s.Log.Warn(c, reason, msg) })
	switch {
	case err != nil:
		return Result{}, err
	case did == appliedEvent:
		return s.commit(ctx, c, tr, d, snap)
	case did == appliedStep:
		// selectNextNode wrote status itself; re-read it through the
		// informer before writing anything else. The state is unchanged,
		// so the mirror can still be repaired from c.
		s.mirror(ctx, c)
		return Result{RequeueAfter: d.RequeueAfter}, nil
	}
	return s.wait(ctx, c, state, d)
}

// snapshot gathers the upgrade facts from listers: the cluster's spec and
// status.upgrade, its nodes' states and running versions, its volumes'
// heal states (status.volumes) and the CSI node plugin.
func (s *UpgradeSyncer) snapshot(ctx context.Context, c *operatorv1alpha1.GlusterCluster, state fsm.State) (states.UpgradeSnapshot, error) {
	up := c.Status.Upgrade
	snap := states.UpgradeSnapshot{
		State: state, Now: s.Clock.Now(),
		Paused:        c.Spec.Paused,
		TargetVersion: clusterVersion(c),
		StepTimeout:   DefaultHealTimeout,
		CompleteHold:  DefaultUpgradeCompleteHold,
	}
	if p := c.Spec.UpgradePolicy; p != nil && p.HealTimeout != nil {
		snap.StepTimeout = p.HealTimeout.Duration
	}
	if t := lastUpgradeTransition(up.History); t != nil {
		snap.StateSince = t.Time.Time
		if state == states.UpgradeBlocked && t.To == string(states.UpgradeBlocked) {
			snap.BlockReason, snap.BlockMessage = t.Reason, t.Message
		}
	}
	if up.StepStartTime != nil {
		snap.StepStartedAt = up.StepStartTime.Time
	}
	// The run's target is the one validated fired with; before that, and
	// once the run is over, there is none.
	switch state {
	case states.UpgradeRollingServers, states.UpgradeRollingClients, states.UpgradeComplete, states.UpgradeBlocked, states.UpgradePaused:
		snap.ActiveTarget = up.ToVersion
	}
	nodes, err := s.Nodes.GlusterNodes(c.Namespace).List(labels.Everything())
	if err != nil {
		return snap, err
	}
	tally := states.CountNodes(clusterNodeFacts(nodes, c.Name), snap.ActiveTarget)
	tally.FillUpgrade(&snap)
	var maxParallel int
	var perZone bool
	if p := c.Spec.UpgradePolicy; p != nil {
		maxParallel, perZone = int(p.MaxParallel), p.PerZone
	}
	snap.NextNodes = states.UpgradeBatch(tally.Candidates, up.CurrentNodes, maxParallel, perZone)
	for _, v := range c.Status.Volumes {
		switch fsm.State(v.State) {
		case states.HealHealthy:
		case states.HealSplitBrain:
			snap.VolumesSplitBrain++
			snap.VolumesUnhealthy++
		default:
			snap.VolumesUnhealthy++
		}
	}
	csiTarget := cmp.Or(snap.ActiveTarget, snap.TargetVersion)
	csi := s.CSI
	if state != states.UpgradeRollingClients {
		// Which nodes have Gluster volumes in use is a live read of every
		// PersistentVolume and of the pods using them: only the client
		// roll needs it.
		csi.Pinned = nil
	}
	if err := csi.fillUpgrade(ctx, c, csiTarget, &snap); err != nil {
		return snap, err
	}
	return snap, nil
}

// lastUpgradeTransition is the newest record of the upgrade history, nil
// if there is none.
func lastUpgradeTransition(h []operatorv1alpha1.TransitionRecord) *operatorv1alpha1.TransitionRecord {
	if len(h) == 0 {
		return nil
	}
	return &h[len(h)-1]
}

// commit persists one transition in status.upgrade with one status write,
// then announces it.
func (s *UpgradeSyncer) commit(ctx context.Context, c *operatorv1alpha1.GlusterCluster, tr fsm.Transition, d states.Decision, snap states.UpgradeSnapshot) (Result, error) {
	now := s.Clock.Now()
	cm := Committed{
		Machine: states.UpgradeMachine, Namespace: c.Namespace, Name: c.Name,
		From: tr.From[0], To: tr.To, Event: tr.Event, Reason: d.Reason, Message: d.Message, Time: now,
	}
	up := c.Status.Upgrade
	up.State = string(tr.To)
	up.History = AppendHistory(up.History, cm.Record())
	stamp := metav1.NewTime(now)
	switch tr.Event {
	case states.UpgradeValidated:
		// The run's target is fixed here; a resumed run gets a fresh
		// step timeout.
		if up.ToVersion != snap.TargetVersion || up.StartTime == nil {
			// A new run, not a resumed one.
			up.StartTime = &stamp
			up.FromVersion = oldestVersion(snap.ServerVersions, up.ToVersion)
		}
		up.ToVersion = snap.TargetVersion
		up.StepStartTime = &stamp
	case states.UpgradeServersDone:
		up.CurrentNodes = nil
		up.StepStartTime = &stamp
	case states.UpgradeSettle, states.UpgradeCancel:
		up.CurrentNodes = nil
		up.StepStartTime = nil
	}
	s.fillStatus(c, tr.To, d)
	updated, err := s.fence.commitClusterStatus(ctx, s.Anthill, upgradeKey(c.Namespace, c.Name), c)
	if err != nil {
		return Result{}, fmt.Errorf("persist upgrade transition %s -> %s: %w", cm.From, cm.To, err)
	}
	s.Log.Announce(updated, cm)
	s.mirror(ctx, updated)
	// The informer delivers this write as an update; that sync continues.
	return Result{}, nil
}

// wait records the decision's message; it writes status only when
// something a user can see changed.
func (s *UpgradeSyncer) wait(ctx context.Context, c *operatorv1alpha1.GlusterCluster, state fsm.State, d states.Decision) (Result, error) {
	before := c.Status.DeepCopy()
	if c.Status.Upgrade.State == "" {
		if state == upgradeDef.Initial && d.RequeueAfter == 0 {
			// Nothing has ever happened: keep status.upgrade absent.
			return Result{}, nil
		}
		c.Status.Upgrade.State = string(state)
	}
	s.fillStatus(c, state, d)
	if !equality.Semantic.DeepEqual(before, &c.Status) {
		if _, err := s.Anthill.OperatorV1alpha1().GlusterClusters(c.Namespace).UpdateStatus(ctx, c, metav1.UpdateOptions{}); err != nil {
			return Result{}, err
		}
	}
	// Repairs a mirror write an earlier transition could not make.
	s.mirror(ctx, c)
	return Result{RequeueAfter: d.RequeueAfter}, nil
}

// fillStatus sets the message and the Upgrading condition for state.
func (s *UpgradeSyncer) fillStatus(c *operatorv1alpha1.GlusterCluster, st fsm.State, d states.Decision) {
	c.Status.Upgrade.Message = truncate(d.Message, 1024)
	cond := metav1.Condition{Type: ConditionUpgrade, Reason: d.Reason, Message: truncate(d.Message, 1024), ObservedGeneration: c.Generation}
	switch st {
	case states.UpgradeIdle:
		apimeta.RemoveStatusCondition(&c.Status.Conditions, ConditionUpgrade)
		return
	case states.UpgradeBlocked, states.UpgradePaused, states.UpgradeComplete:
		cond.Status = metav1.ConditionFalse
	default:
		cond.Status = metav1.ConditionTrue
	}
	apimeta.SetStatusCondition(&c.Status.Conditions, cond)
}

// oldestVersion is the lowest of versions by version order, or fallback
// when there is none.
func oldestVersion(versions []string, fallback string) string {
	oldest := ""
	var ov states.Version
	for _, v := range versions {
		pv, err := states.ParseVersion(v)
		if err != nil {
			continue
		}
		if oldest == "" || pv.Compare(ov) < 0 {
			oldest, ov = v, pv
		}
	}
	return cmp.Or(oldest, fallback)
}
