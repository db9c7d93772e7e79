package upgrade

import (
	"cmp"
	"context"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/clock"

	"github.com/gluster/anthill/fsm"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/client/clientset/versioned"
	listers "github.com/gluster/anthill/kube/client/listers/operator/v1alpha1"
	"github.com/gluster/anthill/kube/effects"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/kube/machines/machinestatus"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
	"github.com/gluster/anthill/transitions"
)

// The phases the runner finds on the syncer, said at compile time
// (SurfacesUnknown through machinestatus.OnCluster: an unknown state sets the
// cluster's Degraded condition).
var (
	_ engine.MachineSyncer[*operatorv1alpha1.GlusterCluster, *upgradeFacts] = (*Syncer)(nil)
	_ engine.Forgets                                                        = (*Syncer)(nil)
	_ engine.Prepares[*operatorv1alpha1.GlusterCluster]                     = (*Syncer)(nil)
	_ engine.SurfacesUnknown[*operatorv1alpha1.GlusterCluster]              = (*Syncer)(nil)
	_ engine.Finishes[*operatorv1alpha1.GlusterCluster, *upgradeFacts]      = (*Syncer)(nil)
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

// Syncer advances the upgrade machine of one GlusterCluster per
// sync; the key is (upgrade, namespace, cluster). The machine is persisted
// in status.upgrade. It only decides and records: which node is upgraded
// now (status.upgrade.currentNode), and the CSI client version. Each node's
// own machine stops, restarts and heals it, re-reading GD2 live before it
// stops anything.
type Syncer struct {
	upMirror upgradeMirror

	Clusters listers.GlusterClusterLister
	Nodes    listers.GlusterNodeLister
	CSI      effects.CSIReader
	Anthill  versioned.Interface
	Kube     transitions.KubeOps
	// Audit logs every configuration-altering call of the actions.
	Audit effects.Audit
	// GD2 mirrors the machine's state onto the cluster's peers
	// (transitions.MetaUpgrade); nil mirrors nothing.
	GD2   *effects.GD2Clients
	Log   *engine.TransitionLog
	Clock clock.Clock

	machinestatus.OnCluster[*upgradeFacts]
}

// Sync runs one decision of the upgrade machine of the cluster named by key.
func (s *Syncer) Sync(ctx context.Context, key engine.Key) (engine.Result, error) {
	return s.SyncWith(ctx, key, s, s.Anthill, s.Log, s.Clock, upgradeFields)
}

// upgradeFields are the status fields the upgrade machine alone writes:
// status.upgrade (beside its condition).
func upgradeFields(st *operatorv1alpha1.GlusterClusterStatus) []any {
	return []any{&st.Upgrade}
}

// upgradeFacts is what one upgrade sync gathered.
type upgradeFacts struct{ snap states.UpgradeSnapshot }

// Prompt reports whether the upgrade machine decides again at once after a
// transition into state (states.UpgradeStateMeaning.Prompt).
func (s *Syncer) Prompt(state fsm.State) bool { return states.UpgradeMeaning(state).Prompt }

// Definition is the upgrade machine.
func (s *Syncer) Definition() *fsm.Definition { return upgradeDef }

// Get reads the cluster from the cache.
func (s *Syncer) Get(key engine.Key) (*operatorv1alpha1.GlusterCluster, error) {
	return s.Clusters.GlusterClusters(key.Namespace).Get(key.Name)
}

// Forget drops the mirror bookkeeping of a cluster that is gone.
func (s *Syncer) Forget(key engine.Key) { s.forgetMirror(key) }

// Prepare stops the machine for a cluster being deleted (it is not
// upgraded any further) and for an external pool (its servers are
// upgraded by its own admins).
func (s *Syncer) Prepare(_ context.Context, c *operatorv1alpha1.GlusterCluster) (bool, engine.Result, error) {
	return c.DeletionTimestamp != nil || c.Spec.Mode == operatorv1alpha1.ClusterModeExternal, engine.Result{}, nil
}

// Instances is the upgrade machine's one instance, at the state in
// status.upgrade (absent: Idle, never run).
func (s *Syncer) Instances(_ context.Context, c *operatorv1alpha1.GlusterCluster) ([]engine.Instance[*upgradeFacts], error) {
	in := engine.Instance[*upgradeFacts]{Facts: &upgradeFacts{}}
	if c.Status.Upgrade != nil {
		in.State = fsm.State(c.Status.Upgrade.State)
	}
	return []engine.Instance[*upgradeFacts]{in}, nil
}

// Gather reads the upgrade facts from status.upgrade, the nodes and the
// CSI plugin.
func (s *Syncer) Gather(ctx context.Context, c *operatorv1alpha1.GlusterCluster, in *engine.Instance[*upgradeFacts]) error {
	view := c
	if c.Status.Upgrade == nil {
		// snapshot reads status.upgrade; a never-run machine has none.
		cc := *c
		cc.Status.Upgrade = &operatorv1alpha1.UpgradeStatus{}
		view = &cc
	}
	var err error
	in.Facts.snap, err = s.snapshot(ctx, view, in.State)
	return err
}

// Decide is the upgrade's pure decision.
func (s *Syncer) Decide(in engine.Instance[*upgradeFacts]) states.Decision {
	return states.DecideUpgrade(in.Facts.snap)
}

// Act runs the upgrade action of d (selectNextNode has none: Record
// writes the batch).
func (s *Syncer) Act(ctx context.Context, c *operatorv1alpha1.GlusterCluster, in engine.Instance[*upgradeFacts], d states.Decision) (any, error) {
	a, ok := transitions.UpgradeActions.For(d)
	if !ok {
		return nil, nil
	}
	target := transitions.ClusterTarget{Namespace: c.Namespace, Name: c.Name, TargetVersion: in.Facts.snap.ActiveTarget}
	return nil, a(ctx, s.Audit.Ops(transitions.Ops{Kube: s.Kube, GD2: effects.NoGD2{}}), target)
}

// Message is status.upgrade's message.
func (s *Syncer) Message(c *operatorv1alpha1.GlusterCluster, _ string) string {
	if c.Status.Upgrade == nil {
		return ""
	}
	return c.Status.Upgrade.Message
}

// Record lands the outcome in status.upgrade and the Upgrading condition.
func (s *Syncer) Record(c *operatorv1alpha1.GlusterCluster, outs []engine.Outcome[*upgradeFacts], now time.Time) {
	out := &outs[0]
	switch out.Kind {
	case engine.Unknown, engine.Refused, engine.Failed:
		return
	case engine.Waited:
		if c.Status.Upgrade == nil && out.To == upgradeDef.Initial && out.Decision.RequeueAfter == 0 {
			// Nothing has ever happened: keep status.upgrade absent.
			return
		}
	}
	if c.Status.Upgrade == nil {
		c.Status.Upgrade = &operatorv1alpha1.UpgradeStatus{}
	}
	up := c.Status.Upgrade
	up.State = string(out.To)
	if out.Kind == engine.Fired {
		up.History = engine.AppendHistory(up.History, out.Committed.Record())
	}
	// How the event or step moves the run's cursor is states'.
	if cur, moved := states.MoveUpgradeCursor(cursorOf(up), out.Facts.snap, out.Decision, now); moved {
		setCursor(up, cur)
	}
	s.fillStatus(c, out.To, out.Decision)
}

// Finish mirrors the persisted state onto the cluster's peers (repairing a
// mirror write an earlier sync could not make).
func (s *Syncer) Finish(ctx context.Context, c *operatorv1alpha1.GlusterCluster, outs []engine.Outcome[*upgradeFacts], res engine.Result, err error) (engine.Result, error) {
	if k := outs[0].Kind; k != engine.Unknown && k != engine.Refused && c.Status.Upgrade != nil {
		s.mirror(ctx, c)
	}
	return res, err
}

// snapshot gathers the upgrade facts from listers: the cluster's spec and
// status.upgrade, its nodes' states and running versions, its volumes'
// heal states (status.volumes) and the CSI node plugin.
func (s *Syncer) snapshot(ctx context.Context, c *operatorv1alpha1.GlusterCluster, state fsm.State) (states.UpgradeSnapshot, error) {
	up := c.Status.Upgrade
	snap := states.UpgradeSnapshot{
		State: state, Now: s.Clock.Now(),
		Paused:        c.Spec.Paused,
		Off:           objects.AutomationOff(c),
		TargetVersion: objects.ClusterVersion(c),
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
	if states.UpgradeMeaning(state).Target == states.ValidatedTarget {
		snap.ActiveTarget = up.ToVersion
	}
	nodes, err := s.Nodes.GlusterNodes(c.Namespace).List(labels.Everything())
	if err != nil {
		return snap, err
	}
	tally := states.CountNodes(objects.ClusterNodeFacts(nodes, c), snap.ActiveTarget)
	tally.FillUpgrade(&snap)
	var maxParallel int
	var perZone bool
	if p := c.Spec.UpgradePolicy; p != nil {
		maxParallel, perZone = int(p.MaxParallel), p.PerZone
	}
	snap.NextNodes = states.UpgradeBatch(tally.Candidates, up.CurrentNodes, maxParallel, perZone)
	heal := make([]fsm.State, 0, len(c.Status.Volumes))
	for _, v := range c.Status.Volumes {
		heal = append(heal, fsm.State(v.State))
	}
	snap.CountVolumes(heal)
	if state == states.UpgradeRollingServers && snap.NodesUpgrading == 0 && snap.NodesOnline == snap.NodesTotal &&
		snap.VolumesSplitBrain == 0 && snap.VolumesUnhealthy > 0 && len(snap.NextNodes) > 0 {
		// Only the heal machine's records hold the next batch: read
		// those volumes live rather than wait for its next look.
		snap.VolumesHealedLive = s.healedLive(ctx, c)
	}
	csiTarget := cmp.Or(snap.ActiveTarget, snap.TargetVersion)
	csi := s.CSI
	if state != states.UpgradeRollingClients {
		// Which nodes have Gluster volumes in use is a live read of every
		// PersistentVolume and of the pods using them: only the client
		// roll needs it.
		csi.Pinned = nil
	}
	if err := csi.FillUpgrade(ctx, c, csiTarget, &snap); err != nil {
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

// fillStatus sets the message and the Upgrading condition for state.
func (s *Syncer) fillStatus(c *operatorv1alpha1.GlusterCluster, st fsm.State, d states.Decision) {
	c.Status.Upgrade.Message = engine.Truncate(d.Message, engine.MaxConditionMessage)
	status := states.UpgradeMeaning(st).Upgrading
	if status == states.ConditionAbsent {
		apimeta.RemoveStatusCondition(&c.Status.Conditions, ConditionUpgrade)
		return
	}
	apimeta.SetStatusCondition(&c.Status.Conditions, metav1.Condition{
		Type: ConditionUpgrade, Status: metav1.ConditionStatus(status), Reason: d.Reason,
		Message: engine.Truncate(d.Message, engine.MaxConditionMessage), ObservedGeneration: c.Generation,
	})
}

// cursorOf is up's cursor (states.UpgradeCursor).
func cursorOf(up *operatorv1alpha1.UpgradeStatus) states.UpgradeCursor {
	c := states.UpgradeCursor{CurrentNodes: up.CurrentNodes, FromVersion: up.FromVersion, ToVersion: up.ToVersion}
	if up.StartTime != nil {
		c.StartTime = up.StartTime.Time
	}
	if up.StepStartTime != nil {
		c.StepStartTime = up.StepStartTime.Time
	}
	return c
}

// setCursor writes cursor c into up.
func setCursor(up *operatorv1alpha1.UpgradeStatus, c states.UpgradeCursor) {
	up.CurrentNodes, up.FromVersion, up.ToVersion = c.CurrentNodes, c.FromVersion, c.ToVersion
	up.StartTime, up.StepStartTime = optTime(c.StartTime), optTime(c.StepStartTime)
}

// optTime is t as a status time, nil when zero.
func optTime(t time.Time) *metav1.Time {
	if t.IsZero() {
		return nil
	}
	return &metav1.Time{Time: t}
}
