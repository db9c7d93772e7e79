package heal

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/gluster/anthill/fsm"
	"github.com/gluster/anthill/gd2"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/client/clientset/versioned"
	listers "github.com/gluster/anthill/kube/client/listers/operator/v1alpha1"
	"github.com/gluster/anthill/kube/effects"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/kube/machines/gather"
	"github.com/gluster/anthill/kube/machines/machinestatus"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
	"github.com/gluster/anthill/transitions"
)

// The phases the runner finds on the syncer, said at compile time
// (SurfacesUnknown through machinestatus.OnCluster: an unknown heal state sets the
// cluster's Degraded condition, and the volume's entry is kept as it was).
var (
	_ engine.MachineSyncer[*operatorv1alpha1.GlusterCluster, *healFacts] = (*Syncer)(nil)
	_ engine.Forgets                                                     = (*Syncer)(nil)
	_ engine.Prepares[*operatorv1alpha1.GlusterCluster]                  = (*Syncer)(nil)
	_ engine.SurfacesUnknown[*operatorv1alpha1.GlusterCluster]           = (*Syncer)(nil)
	_ engine.Finishes[*operatorv1alpha1.GlusterCluster, *healFacts]      = (*Syncer)(nil)
)

// Heal refresh defaults.
const (
	// DefaultHealInterval is how often a cluster's volumes are re-read.
	DefaultHealInterval = 30 * time.Second
	// DefaultHealMaxBackoff caps the interval while GD2 keeps failing.
	DefaultHealMaxBackoff = 5 * time.Minute
	// DefaultHealWorkers bounds the concurrent GD2 reads of one heal sync.
	DefaultHealWorkers = 4
	// DefaultHealStallTimeout is how long Healing may go without progress.
	DefaultHealStallTimeout = 10 * time.Minute
	// healJitter is the ± fraction applied to every requeue interval, so
	// that clusters created together do not poll GD2 in lockstep.
	healJitter = 0.2
)

var healDef = states.HealDefinition()

// Syncer runs the heal machine of every volume of one GlusterCluster
// per sync: the key is (heal, namespace, cluster). One sync lists the
// cluster's volumes once, reads heal-info of the redundant started ones
// with at most Workers concurrent GD2 calls, fires at most one transition
// per volume, and persists every volume's entry in status.volumes with one
// status write (none when nothing changed). It requeues itself after
// Interval ± 20 %, backing off while GD2 fails.
type Syncer struct {
	Clusters listers.GlusterClusterLister
	// Nodes, when set, gives the states of the cluster's GlusterNodes:
	// bricks on a node being changed (states.ChangesBricks) are never
	// started by forceStartBricks. Nil (external mode, tests) knows of no
	// node.
	Nodes   listers.GlusterNodeLister
	Anthill versioned.Interface
	GD2     *effects.GD2Clients
	// Audit logs every configuration-altering call of the actions.
	Audit effects.Audit
	Log   *engine.TransitionLog
	Clock clock.Clock

	// Zero values take the Default* constants.
	Interval     time.Duration
	MaxBackoff   time.Duration
	Workers      int
	StallTimeout time.Duration
	// Jitter returns a number in [0, 1); nil uses math/rand/v2.
	Jitter func() float64
	// Volumes, when set, receives every sync's reading of the cluster's
	// volumes and bricks (VolumeMetrics). It costs GD2 reads: bricks
	// status of every started volume (read anyway for a redundant one)
	// and volume status of every started volume. Nil reads neither.
	Volumes *VolumeMetrics

	mu sync.Mutex
	// backoff is the current back-off interval per key (absent: none).
	backoff map[engine.Key]time.Duration
	// progress remembers, per volume in Healing, the last pending count and
	// when it last fell (status has no field for it; after a restart the
	// state's start time is used, which at worst re-triggers a heal).
	progress map[string]healProgress
	// notStarted remembers, per volume, since when this operator has seen
	// bricks GD2 left offline on a live peer without a break (see
	// states.BricksNotStarted.Since); forgotten like progress.
	notStarted map[string]time.Time

	machinestatus.OnCluster[*healFacts]
}

// The settings fall back to their defaults when left zero.
func (s *Syncer) interval() time.Duration   { return cmp.Or(s.Interval, DefaultHealInterval) }
func (s *Syncer) maxBackoff() time.Duration { return cmp.Or(s.MaxBackoff, DefaultHealMaxBackoff) }
func (s *Syncer) workers() int              { return cmp.Or(s.Workers, DefaultHealWorkers) }
func (s *Syncer) stallTimeout() time.Duration {
	return cmp.Or(s.StallTimeout, DefaultHealStallTimeout)
}

// jitter spreads d by ±healJitter.
func (s *Syncer) jitter(d time.Duration) time.Duration {
	r := s.Jitter
	if r == nil {
		r = rand.Float64
	}
	f := 1 + healJitter*(2*r()-1)
	return time.Duration(float64(d) * f)
}

func (s *Syncer) log(key engine.Key) *zap.Logger {
	return s.Log.Log.With(zap.String(engine.LogMachine, states.HealMachine), zap.String(engine.LogNamespace, key.Namespace), zap.String(engine.LogName, key.Name))
}

// Sync refreshes the heal machines of the cluster named by key. What the
// sync learns of the cluster as a whole goes from Instances to Finish in
// its context (syncScope), not on the syncer.
func (s *Syncer) Sync(ctx context.Context, key engine.Key) (engine.Result, error) {
	return s.SyncWith(context.WithValue(ctx, syncScopeKey{}, &syncScope{}), key, s, s.Anthill, s.Log, s.Clock, healFields)
}

// syncScope is what one heal sync learned of the cluster as a whole
// (healSync), kept in the sync's context from Instances, which lists the
// volumes, to Finish, which backs off when the list failed: a sync with no
// volume has no instance to carry it.
type syncScope struct{ listed *healSync }

type syncScopeKey struct{}

// scopeOf is ctx's syncScope; nil outside Sync.
func scopeOf(ctx context.Context) *syncScope {
	sc, _ := ctx.Value(syncScopeKey{}).(*syncScope)
	return sc
}

// healFields are the status fields the heal machines alone write:
// status.volumes (beside their conditions and history records).
func healFields(st *operatorv1alpha1.GlusterClusterStatus) []any {
	return []any{&st.Volumes}
}

// healFacts is what one sync learned about one volume.
type healFacts struct {
	reading healReading
	// prev is the volume's entry in status.volumes before this sync.
	prev operatorv1alpha1.VolumeStatus
	snap states.HealSnapshot
	// sync is shared by every volume of the sync.
	sync *healSync
}

// offlinePeer is a live peer with bricks of a volume GD2 left offline.
type offlinePeer struct {
	peer string
	// node is the peer's GlusterNode ("" for a peer anthill did not add).
	node string
}

// healSync is what one heal sync learned about the cluster as a whole.
type healSync struct {
	key engine.Key
	// listErr is set when GD2 could not list the volumes or peers.
	listErr error
	ops     transitions.GD2Ops
	// peers are the cluster's GD2 peers as listed this sync (the shared
	// view), by id.
	peers map[string]gd2.Peer
	// nodes are the cluster's GlusterNodes by peer id.
	nodes map[string]*operatorv1alpha1.GlusterNode
}

// Definition is the heal machine.
func (s *Syncer) Definition() *fsm.Definition { return healDef }

// Get reads the cluster from the cache.
func (s *Syncer) Get(key engine.Key) (*operatorv1alpha1.GlusterCluster, error) {
	return s.Clusters.GlusterClusters(key.Namespace).Get(key.Name)
}

// Prepare stops the machines of a Deleted cluster.
func (s *Syncer) Prepare(_ context.Context, c *operatorv1alpha1.GlusterCluster) (bool, engine.Result, error) {
	if c.Status.Phase == operatorv1alpha1.ClusterPhase(states.ClusterDeleted) {
		s.Forget(gather.HealKey(c.Namespace, c.Name))
		return true, engine.Result{}, nil
	}
	return false, engine.Result{}, nil
}

// Instances lists the cluster's volumes once and reads heal-info of the
// redundant started ones, at most Workers GD2 calls at a time: one
// instance per volume. When GD2 does not answer, every volume already in
// status is an instance with no reading (lostContact); none is dropped,
// since the volume list is unknown. A volume no longer listed by GD2 has
// no instance, and Record drops its entry.
func (s *Syncer) Instances(ctx context.Context, c *operatorv1alpha1.GlusterCluster) ([]engine.Instance[*healFacts], error) {
	hs := &healSync{key: gather.HealKey(c.Namespace, c.Name), ops: effects.NoGD2{}}
	var vols []gd2.Volume
	gc, err := s.GD2.For(ctx, c)
	if err == nil {
		hs.ops = &effects.GD2{Client: gc}
		// Which volumes there are, and whose, may come from the cluster's
		// shared view (effects.ConfigListFactor intervals old at most):
		// each volume's heal info, which every heal decision rests on, is
		// read live.
		lists := s.GD2.Shared(c, gc)
		if vols, err = lists.ListVolumes(ctx, gd2.Filter{}); err != nil {
			err = fmt.Errorf("list volumes: %w", err)
		} else {
			var peers []gd2.Peer
			if peers, err = lists.ListPeers(ctx, gd2.Filter{}); err != nil {
				err = fmt.Errorf("list peers: %w", err)
			}
			vols = gather.OwnVolumes(c, vols, peers)
			hs.peers = make(map[string]gd2.Peer, len(peers))
			for _, p := range peers {
				hs.peers[p.ID] = p
			}
		}
	}
	if err != nil && errors.Is(err, context.Canceled) {
		return nil, err
	}
	hs.listErr = err
	hs.nodes = s.clusterNodes(c)
	if sc := scopeOf(ctx); sc != nil {
		sc.listed = hs
	}
	var readings []healReading
	if err == nil {
		// A volume the list (shared, so a little old) still
		// names but GD2 no longer knows was deleted since: it has no
		// instance, as if the list had been read after the deletion.
		readings = slices.DeleteFunc(s.read(ctx, gc, vols), func(r healReading) bool { return errors.Is(r.err, gd2.ErrNotFound) })
		s.Volumes.set(hs.key, s.volumeSamples(hs.key, readings))
	} else {
		for _, v := range c.Status.Volumes {
			readings = append(readings, healReading{vol: gd2.Volume{Name: v.Name}, redundant: true, started: true, err: err})
		}
	}
	prev := map[string]operatorv1alpha1.VolumeStatus{}
	for _, v := range c.Status.Volumes {
		prev[v.Name] = v
	}
	ins := make([]engine.Instance[*healFacts], 0, len(readings))
	for _, r := range readings {
		p := prev[r.vol.Name]
		ins = append(ins, engine.Instance[*healFacts]{Subject: r.vol.Name, State: fsm.State(p.State), Facts: &healFacts{reading: r, prev: p, sync: hs}})
	}
	return ins, nil
}

// Gather builds one volume's heal snapshot from its reading.
func (s *Syncer) Gather(_ context.Context, c *operatorv1alpha1.GlusterCluster, in *engine.Instance[*healFacts]) error {
	r, prev, state, now := in.Facts.reading, in.Facts.prev, in.State, s.Clock.Now()
	snap := states.HealSnapshot{
		State: state, Now: now, Volume: in.Subject,
		Redundant: r.redundant, Started: r.started, HealInfoOK: r.ok,
		PendingEntries: r.pending, SplitBrainEntries: r.split, BricksUnreachable: r.down,
		StallTimeout: s.stallTimeout(), Off: objects.AutomationOff(c),
		// GD2 triggers a heal only when this option is "on" (it is off by
		// default on replicate volumes).
		SelfHealOff: r.vol.Options[gd2.OptionSelfHealDaemon] != "on",
	}
	if prev.LastTransitionTime != nil {
		snap.StateSince = prev.LastTransitionTime.Time
	}
	snap.LastProgressAt, snap.LastReading = s.trackProgress(c, r, state, now)
	snap.TriggerNotDelivered = state == states.HealHealing && healingFromUndeliveredTrigger(c.Status.History, in.Subject)
	snap.NotStarted = bricksNotStarted(r, in.Facts.sync)
	_, snap.NotStarted.Grace, _ = gather.FailureWindows(c)
	snap.NotStarted.Since = s.trackNotStarted(c, r.vol.Name, snap.NotStarted, now)
	in.Facts.snap = snap
	return nil
}

// Decide is one volume's pure decision.
func (s *Syncer) Decide(in engine.Instance[*healFacts]) states.Decision {
	return states.DecideHeal(in.Facts.snap)
}

// notDelivered is what Act learns when GD2 ran the heal trigger but could
// not hand it to a self-heal daemon (transitions.ErrHealNotDelivered):
// startHeal fires all the same and Record says why.
type notDelivered struct{ err error }

// Act runs the heal action of d on the volume. A heal trigger GD2 could
// not hand to a self-heal daemon is not a failed action: the daemons crawl
// on their own, so startHeal fires and the machine watches the crawl in
// Healing; Act returns it as notDelivered and Record says why (reason
// HealTriggerFailed).
func (s *Syncer) Act(ctx context.Context, c *operatorv1alpha1.GlusterCluster, in engine.Instance[*healFacts], d states.Decision) (any, error) {
	a, ok := transitions.HealActions.For(d)
	if !ok {
		return nil, nil
	}
	err := a(ctx, s.Audit.Ops(transitions.Ops{GD2: in.Facts.sync.ops}), transitions.VolumeTarget{Cluster: c.Name, Volume: in.Subject})
	if d.Event == states.HealStartHeal && errors.Is(err, transitions.ErrHealNotDelivered) {
		return notDelivered{err}, nil
	}
	return nil, err
}

// Message is the message of the volume's entry in status.volumes.
func (s *Syncer) Message(c *operatorv1alpha1.GlusterCluster, volume string) string {
	for _, v := range c.Status.Volumes {
		if v.Name == volume {
			return v.Message
		}
	}
	return ""
}

// Record rebuilds status.volumes from this sync's volumes, sorted by name
// (a volume GD2 no longer lists is dropped), and appends each transition
// to the history it shares with the cluster machine.
func (s *Syncer) Record(c *operatorv1alpha1.GlusterCluster, outs []engine.Outcome[*healFacts], now time.Time) {
	entries := make([]operatorv1alpha1.VolumeStatus, 0, len(outs))
	var undelivered []string
	for i := range outs {
		out := &outs[i]
		r := out.Facts.reading
		entry := out.Facts.prev
		switch out.Kind {
		case engine.Unknown, engine.Refused:
			// Never reset an unknown state: an admin must look.
			entries = append(entries, entry)
			continue
		}
		if nd, ok := out.Learned.(notDelivered); ok && out.Kind == engine.Fired {
			note := undeliveredNote(nd.err)
			out.Decision.Reason, out.Decision.Message = states.ReasonHealTriggerFailed, out.Decision.Message+" "+note
			out.Committed.Reason, out.Committed.Message = out.Decision.Reason, out.Decision.Message
			s.Log.Warn(c, states.ReasonHealTriggerFailed, out.Subject+": "+note)
		}
		if out.To == states.HealHealing && (out.Decision.Reason == states.ReasonHealTriggerFailed || out.Facts.snap.TriggerNotDelivered) {
			undelivered = append(undelivered, out.Subject)
		}
		entry.Name = r.vol.Name
		entry.State = string(out.To)
		if r.ok {
			entry.PendingEntries, entry.SplitBrainEntries = r.pending, r.split
			entry.Bricks, entry.BricksOnline = int32(r.bricks), int32(r.bricks-r.down)
		} else if !r.redundant {
			entry.PendingEntries, entry.SplitBrainEntries = 0, 0
		}
		switch out.Kind {
		case engine.Failed:
			entry.Message = engine.Truncate(out.Message, engine.MaxConditionMessage)
		case engine.Stepped:
			// A brick start is announced and kept in the history like a
			// transition from HealPending to itself.
			entry.Message = out.Decision.Message
			rec := out.RecordStep(states.HealMachine, c, now)
			c.Status.History = machinestatus.AppendHealHistory(c.Status.History, rec.Record())
		case engine.Fired:
			entry.LastTransitionTime = &metav1.Time{Time: now}
			entry.Message = out.Decision.Message
			c.Status.History = machinestatus.AppendHealHistory(c.Status.History, out.Committed.Record())
		default:
			entry.Message = out.Decision.Message
		}
		entries = append(entries, entry)
	}
	slices.SortFunc(entries, func(a, b operatorv1alpha1.VolumeStatus) int { return strings.Compare(a.Name, b.Name) })
	c.Status.Volumes = entries
	slices.Sort(undelivered)
	setHealTriggerCondition(c, undelivered)
}

// Finish mirrors the persisted heal states into GD2, forgets the progress
// of volumes that are gone, and requeues after Interval ± 20 %, backing off
// while GD2 fails: the volume list could not be read, every heal-info read
// failed, or an action failed. One unreadable volume among readable ones
// keeps the normal interval for the others' sake. Failures are logged, not
// returned: the machine's own back-off replaces the dispatcher's.
func (s *Syncer) Finish(ctx context.Context, c *operatorv1alpha1.GlusterCluster, outs []engine.Outcome[*healFacts], _ engine.Result, _ error) (engine.Result, error) {
	key := gather.HealKey(c.Namespace, c.Name)
	s.pruneProgress(key, c.Status.Volumes)
	hs := &healSync{key: key, ops: effects.NoGD2{}}
	if sc := scopeOf(ctx); sc != nil && sc.listed != nil {
		hs = sc.listed
	}
	var (
		listErr, ops = hs.listErr, hs.ops
		readErrs     []error // GD2 reads and actions that failed
		refused      []error // unknown states and refused decisions
		readsOK      int
		actionFailed bool
		next         = s.interval()
		readings     = make([]healReading, 0, len(outs))
	)
	for _, out := range outs {
		r := out.Facts.reading
		readings = append(readings, r)
		if r.err != nil && listErr == nil {
			readErrs = append(readErrs, r.err)
		}
		if r.ok {
			readsOK++
		}
		switch out.Kind {
		case engine.Failed:
			actionFailed = true
			readErrs = append(readErrs, out.Err)
		case engine.Unknown, engine.Refused:
			refused = append(refused, out.Err)
		}
		if after := out.Decision.RequeueAfter; after > 0 && after < next {
			next = after
		}
	}
	if listErr == nil {
		s.mirror(ctx, key, ops, readings, c.Status.Volumes)
	} else {
		readErrs = append(readErrs, listErr)
	}
	if len(refused) > 0 {
		s.log(key).Info("heal decisions refused", zap.Error(errors.Join(refused...)))
	}
	if listErr != nil || (len(readErrs) > 0 && readsOK == 0) || actionFailed {
		s.log(key).Info("heal refresh failed; backing off", zap.Error(errors.Join(readErrs...)))
		return engine.Result{RequeueAfter: s.nextBackoff(key)}, nil
	}
	if len(readErrs) > 0 {
		s.log(key).Info("heal refresh partly failed", zap.Error(errors.Join(readErrs...)))
	}
	s.resetBackoff(key)
	return engine.Result{RequeueAfter: s.jitter(next)}, nil
}

// Forget drops what the syncer remembers of a deleted cluster.
func (s *Syncer) Forget(key engine.Key) {
	s.mu.Lock()
	delete(s.backoff, key)
	s.mu.Unlock()
	s.pruneProgress(key, nil)
	s.Volumes.forget(key)
}
