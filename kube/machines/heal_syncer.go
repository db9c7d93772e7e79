package machines

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/gluster/anthill/fsm"
	"github.com/gluster/anthill/gd2"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/client/clientset/versioned"
	listers "github.com/gluster/anthill/kube/client/listers/operator/v1alpha1"
	"github.com/gluster/anthill/kube/effects"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/states"
	"github.com/gluster/anthill/transitions"
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

// HealSyncer runs the heal machine of every volume of one GlusterCluster
// per sync: the key is (heal, namespace, cluster). One sync lists the
// cluster's volumes once, reads heal-info of the redundant started ones
// with at most Workers concurrent GD2 calls, fires at most one transition
// per volume, and persists every volume's entry in status.volumes with one
// status write (none when nothing changed). It requeues itself after
// Interval ± 20 %, backing off while GD2 fails.
type HealSyncer struct {
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
	// listed is what the running sync of a key learned of the cluster as
	// a whole, from its Gather to its Finish (one key is never synced by
	// two workers at once).
	listed map[engine.Key]*healSync

	onCluster[*healFacts]
}

type healProgress struct {
	pending int64
	at      time.Time
}

// healReading is what one sync learned about one GD2 volume.
type healReading struct {
	vol       gd2.Volume
	redundant bool
	started   bool
	ok        bool
	err       error
	pending   int64
	split     int64
	down      int
	// bricks counts the bricks of the replica sets read.
	bricks int
	// For VolumeMetrics only (never the heal decision): GD2's bricks
	// status (bricksRead: it answered) and volume status (nil: not read
	// or failed) of a started volume.
	bricksStatus []gd2.BrickStatus
	bricksRead   bool
	status       *gd2.VolumeStatus
}

// The settings fall back to their defaults when left zero.
func (s *HealSyncer) interval() time.Duration   { return cmp.Or(s.Interval, DefaultHealInterval) }
func (s *HealSyncer) maxBackoff() time.Duration { return cmp.Or(s.MaxBackoff, DefaultHealMaxBackoff) }
func (s *HealSyncer) workers() int              { return cmp.Or(s.Workers, DefaultHealWorkers) }
func (s *HealSyncer) stallTimeout() time.Duration {
	return cmp.Or(s.StallTimeout, DefaultHealStallTimeout)
}

// jitter spreads d by ±healJitter.
func (s *HealSyncer) jitter(d time.Duration) time.Duration {
	r := s.Jitter
	if r == nil {
		r = rand.Float64
	}
	f := 1 + healJitter*(2*r()-1)
	return time.Duration(float64(d) * f)
}

func (s *HealSyncer) log(key engine.Key) *zap.Logger {
	return s.Log.Log.With(zap.String(engine.LogMachine, states.HealMachine), zap.String(engine.LogNamespace, key.Namespace), zap.String(engine.LogName, key.Name))
}

// Sync refreshes the heal machines of the cluster named by key.
func (s *HealSyncer) Sync(ctx context.Context, key engine.Key) (engine.Result, error) {
	return s.sync(ctx, key, s, s.Anthill, s.Log, s.Clock, healSlice)
}

// healSlice is the part of the status owned by the heal machines: status.volumes, the history and the conditions.
func healSlice(st *operatorv1alpha1.GlusterClusterStatus) any {
	return []any{st.Volumes, st.History, st.Conditions}
}

// healFacts is what one sync learned about one volume.
type healFacts struct {
	reading healReading
	// prev is the volume's entry in status.volumes before this sync.
	prev operatorv1alpha1.VolumeStatus
	snap states.HealSnapshot
	// sync is shared by every volume of the sync.
	sync *healSync
	// notDelivered is set by Act when GD2 ran the heal trigger but could
	// not hand it to a self-heal daemon (transitions.ErrHealNotDelivered):
	// startHeal fires all the same and Record says why.
	notDelivered error
	// offline are the peers whose bricks GD2 left offline, with their
	// GlusterNodes, for the ledger entries of forceStartBricks.
	offline []offlinePeer
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
func (s *HealSyncer) Definition() *fsm.Definition { return healDef }

// Get reads the cluster from the cache.
func (s *HealSyncer) Get(key engine.Key) (*operatorv1alpha1.GlusterCluster, error) {
	return s.Clusters.GlusterClusters(key.Namespace).Get(key.Name)
}

// Prepare stops the machines of a Deleted cluster.
func (s *HealSyncer) Prepare(_ context.Context, c *operatorv1alpha1.GlusterCluster) (bool, engine.Result, error) {
	if c.Status.Phase == operatorv1alpha1.ClusterPhase(states.ClusterDeleted) {
		s.Forget(healKey(c.Namespace, c.Name))
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
func (s *HealSyncer) Instances(ctx context.Context, c *operatorv1alpha1.GlusterCluster) ([]engine.Instance[*healFacts], error) {
	hs := &healSync{key: healKey(c.Namespace, c.Name), ops: effects.NoGD2{}}
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
			vols = ownVolumes(c, vols, peers)
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
	s.mu.Lock()
	if s.listed == nil {
		s.listed = map[engine.Key]*healSync{}
	}
	s.listed[hs.key] = hs
	s.mu.Unlock()
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
func (s *HealSyncer) Gather(_ context.Context, c *operatorv1alpha1.GlusterCluster, in *engine.Instance[*healFacts]) error {
	r, prev, state, now := in.Facts.reading, in.Facts.prev, in.State, s.Clock.Now()
	snap := states.HealSnapshot{
		State: state, Now: now,
		Redundant: r.redundant, Started: r.started, HealInfoOK: r.ok,
		PendingEntries: r.pending, SplitBrainEntries: r.split, BricksUnreachable: r.down,
		StallTimeout: s.stallTimeout(),
		// GD2 triggers a heal only when this option is "on" (it is off by
		// default on replicate volumes).
		SelfHealOff: r.vol.Options[gd2.OptionSelfHealDaemon] != "on",
	}
	if prev.LastTransitionTime != nil {
		snap.StateSince = prev.LastTransitionTime.Time
	}
	snap.LastProgressAt = s.trackProgress(c, r, state, now)
	snap.TriggerNotDelivered = state == states.HealHealing && healingFromUndeliveredTrigger(c.Status.History, in.Subject)
	snap.NotStarted, in.Facts.offline = bricksNotStarted(r, in.Facts.sync)
	_, snap.NotStarted.Grace, _ = failureWindows(c)
	snap.NotStarted.Since = s.trackNotStarted(c, r.vol.Name, snap.NotStarted, now)
	in.Facts.snap = snap
	return nil
}

// Decide is one volume's pure decision.
func (s *HealSyncer) Decide(in engine.Instance[*healFacts]) states.Decision {
	return states.DecideHeal(in.Facts.snap)
}

// Act runs the heal action of d on the volume. A heal trigger GD2 could
// not hand to a self-heal daemon is not a failed action: the daemons crawl
// on their own, so startHeal fires and the machine watches the crawl in
// Healing; Record says why (reason HealTriggerFailed).
func (s *HealSyncer) Act(ctx context.Context, c *operatorv1alpha1.GlusterCluster, in engine.Instance[*healFacts], d states.Decision) error {
	a, ok := transitions.HealActions.For(d)
	if !ok {
		return nil
	}
	if d.Step == states.HealForceStartBricks {
		// Written ahead of the action (see ledgerClusterChanges).
		if err := ledgerClusterChanges(ctx, s.Anthill, c, forceStartLedgerEntries(in, d, s.Clock.Now())); err != nil {
			return err
		}
	}
	err := a(ctx, s.Audit.Ops(transitions.Ops{GD2: in.Facts.sync.ops}), transitions.VolumeTarget{Cluster: c.Name, Volume: in.Subject})
	if d.Event == states.HealStartHeal && errors.Is(err, transitions.ErrHealNotDelivered) {
		in.Facts.notDelivered = err
		return nil
	}
	return err
}

// ConditionHealTrigger on a GlusterCluster is True while a volume heals
// without the trigger GD2 failed to hand to a self-heal daemon (reason
// HealTriggerFailed, the volumes named in the message); it is absent
// otherwise.
const ConditionHealTrigger = "HealTriggerFailed"

// healingFromUndeliveredTrigger reports whether the last heal record of
// volume in history entered Healing on an undelivered trigger. The history
// is a bounded window: a record pushed out reads as a delivered trigger,
// which only drops the note.
func healingFromUndeliveredTrigger(history []operatorv1alpha1.TransitionRecord, volume string) bool {
	for i := len(history) - 1; i >= 0; i-- {
		h := history[i]
		if h.Machine == states.HealMachine && h.Subject == volume {
			return h.To == string(states.HealHealing) && h.Reason == states.ReasonHealTriggerFailed
		}
	}
	return false
}

// undeliveredNote is what the machine says when GD2 could not hand the
// heal trigger to a self-heal daemon: on how many nodes, and GD2's words
// for the first.
func undeliveredNote(err error) string {
	steps := gd2.TxnSteps(err)
	why := ""
	if len(steps) > 0 {
		why = ": " + steps[0].Error
	}
	return fmt.Sprintf("GD2 could not hand the heal trigger to the self-heal daemon on %d node(s) (step %s%s); "+
		"the daemons crawl on their own, so the heal is watched, not failed.", len(steps), gd2.StepSelfHealHeal, why)
}

// setHealTriggerCondition sets ConditionHealTrigger for the volumes that
// heal without a delivered trigger, or removes it when there are none.
func setHealTriggerCondition(c *operatorv1alpha1.GlusterCluster, volumes []string) {
	if len(volumes) == 0 {
		apimeta.RemoveStatusCondition(&c.Status.Conditions, ConditionHealTrigger)
		return
	}
	apimeta.SetStatusCondition(&c.Status.Conditions, metav1.Condition{
		Type: ConditionHealTrigger, Status: metav1.ConditionTrue, Reason: states.ReasonHealTriggerFailed, ObservedGeneration: c.Generation,
		Message: engine.Truncate("GD2 could not hand the heal trigger to a self-heal daemon for volume(s) "+strings.Join(volumes, ", ")+
			"; the daemons crawl on their own and anthill watches the pending count fall.", engine.MaxConditionMessage),
	})
}

// Conditions is nil: an unknown heal state is surfaced in the volume's
// entry (kept as it was) and a Warning Event, not in the cluster's
// conditions, which the cluster machine owns.
func (s *HealSyncer) Conditions(*operatorv1alpha1.GlusterCluster) *[]metav1.Condition { return nil }

// Message is the message of the volume's entry in status.volumes.
func (s *HealSyncer) Message(c *operatorv1alpha1.GlusterCluster, volume string) string {
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
func (s *HealSyncer) Record(c *operatorv1alpha1.GlusterCluster, outs []engine.Outcome[*healFacts], now time.Time) {
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
		if out.Kind == engine.Fired && out.Facts.notDelivered != nil {
			note := undeliveredNote(out.Facts.notDelivered)
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
			c.Status.History = appendHealHistory(c.Status.History, rec.Record())
		case engine.Fired:
			entry.LastTransitionTime = &metav1.Time{Time: now}
			entry.Message = out.Decision.Message
			c.Status.History = appendHealHistory(c.Status.History, out.Committed.Record())
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
func (s *HealSyncer) Finish(ctx context.Context, c *operatorv1alpha1.GlusterCluster, outs []engine.Outcome[*healFacts], _ engine.Result, _ error) (engine.Result, error) {
	key := healKey(c.Namespace, c.Name)
	s.pruneProgress(key, c.Status.Volumes)
	s.mu.Lock()
	hs := s.listed[key]
	delete(s.listed, key)
	s.mu.Unlock()
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

// read gathers the heal reading of every volume, at most workers volumes
// at a time. Results keep the order of vols. Per started volume and sync
// it costs bricks status and heal-info when the volume is redundant, and
// with Volumes set bricks status (the same call, not repeated) and volume
// status of every started volume.
func (s *HealSyncer) read(ctx context.Context, gc effects.GD2Reader, vols []gd2.Volume) []healReading {
	out := make([]healReading, len(vols))
	sem := make(chan struct{}, s.workers())
	var wg sync.WaitGroup
	metrics := s.Volumes != nil
	for i, v := range vols {
		out[i] = healReading{vol: v, redundant: redundant(v), started: v.State == gd2.VolumeStarted}
		if !out[i].started || (!out[i].redundant && !metrics) {
			continue
		}
		wg.Go(func() {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				out[i].err = ctx.Err()
				return
			}
			defer func() { <-sem }()
			if metrics {
				// A failed volume status leaves status nil: the volume
				// counts as down (GD2 answers it by mounting the volume).
				out[i].status, _ = gc.VolumeStatus(ctx, v.Name)
			}
			bs, err := gc.BricksStatus(ctx, v.Name)
			if err != nil {
				if out[i].redundant {
					out[i].err = fmt.Errorf("bricks status of %s: %w", v.Name, err)
				}
				return
			}
			out[i].bricksStatus, out[i].bricksRead = bs, true
			if !out[i].redundant {
				return
			}
			heal, err := gc.HealInfo(ctx, v.Name, gd2.HealInfoSummary)
			if err != nil {
				out[i].err = fmt.Errorf("heal info of %s: %w", v.Name, err)
				return
			}
			vv := volumeFacts(v, bs, heal)
			out[i].ok = true
			for _, sv := range vv.Subvols {
				if !sv.Replica {
					continue
				}
				for _, b := range sv.Bricks {
					out[i].bricks++
					if !b.Online || b.Pending < 0 {
						out[i].down++
						continue
					}
					out[i].pending += b.Pending
					out[i].split += b.SplitBrain
				}
			}
		})
	}
	wg.Wait()
	return out
}

// mirror writes each volume's heal state, as now persisted in
// status.volumes, into the volume's GD2 metadata (MetaHealState,
// MetaHealSince) where the volume read this sync does not already carry
// it. It runs after the status write, so GD2 never shows a state that
// status does not hold; only volumes in status.volumes (the cluster's own,
// seen in GD2 this sync) are written. A failure is logged and repaired by
// the next sync, which compares again; it never fails the sync.
func (s *HealSyncer) mirror(ctx context.Context, key engine.Key, ops transitions.GD2Ops, readings []healReading, entries []operatorv1alpha1.VolumeStatus) {
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
			Machine: states.HealMachine, Namespace: key.Namespace, Name: key.Name, Subject: e.Name, State: e.State, Action: ActionMirror, Reason: ReasonMirror,
		})
		if err := transitions.MirrorHealState(actx, s.Audit.Ops(transitions.Ops{GD2: ops}).GD2, e.Name, md); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		s.log(key).Info("mirroring heal state into GD2 failed; retrying next sync", zap.Error(errors.Join(errs...)))
	}
}

func progressKey(c *operatorv1alpha1.GlusterCluster, volume string) string {
	return c.Namespace + "/" + c.Name + "/" + volume
}

// trackProgress returns when the pending count of a Healing volume last
// fell (zero: not seen to fall).
func (s *HealSyncer) trackProgress(c *operatorv1alpha1.GlusterCluster, r healReading, state fsm.State, now time.Time) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := progressKey(c, r.vol.Name)
	if state != states.HealHealing {
		delete(s.progress, k)
		return time.Time{}
	}
	p, seen := s.progress[k]
	if !r.ok {
		return p.at
	}
	if seen && r.pending < p.pending {
		p.at = now
	}
	p.pending = r.pending
	if s.progress == nil {
		s.progress = map[string]healProgress{}
	}
	s.progress[k] = p
	return p.at
}

// pruneProgress drops the progress of volumes no longer in the cluster.
func (s *HealSyncer) pruneProgress(key engine.Key, entries []operatorv1alpha1.VolumeStatus) {
	s.mu.Lock()
	defer s.mu.Unlock()
	prefix := key.Namespace + "/" + key.Name + "/"
	gone := func(k string) bool {
		if !strings.HasPrefix(k, prefix) {
			return false
		}
		name := strings.TrimPrefix(k, prefix)
		return !slices.ContainsFunc(entries, func(v operatorv1alpha1.VolumeStatus) bool { return v.Name == name })
	}
	maps.DeleteFunc(s.progress, func(k string, _ healProgress) bool { return gone(k) })
	maps.DeleteFunc(s.notStarted, func(k string, _ time.Time) bool { return gone(k) })
}

func (s *HealSyncer) nextBackoff(key engine.Key) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.backoff == nil {
		s.backoff = map[engine.Key]time.Duration{}
	}
	b := s.backoff[key]
	if b == 0 {
		b = s.interval()
	}
	b = min(2*b, s.maxBackoff())
	s.backoff[key] = b
	return min(s.jitter(b), s.maxBackoff())
}

func (s *HealSyncer) resetBackoff(key engine.Key) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.backoff, key)
}

// Forget drops what the syncer remembers of a deleted cluster.
func (s *HealSyncer) Forget(key engine.Key) {
	s.mu.Lock()
	delete(s.backoff, key)
	s.mu.Unlock()
	s.pruneProgress(key, nil)
	s.Volumes.forget(key)
}

// volumeSamples turns one sync's readings into the cluster's volume
// metrics. A started volume whose bricks status failed keeps the bricks
// it had at the last reading, so one failed call does not make its bricks
// vanish from the metrics (and their alerts restart).
func (s *HealSyncer) volumeSamples(key engine.Key, readings []healReading) []volumeSample {
	prev := map[string][]brickSample{}
	for _, v := range s.Volumes.get(key) {
		prev[v.name] = v.bricks
	}
	out := make([]volumeSample, 0, len(readings))
	for _, r := range readings {
		vs := volumeSampleOf(r.vol, r.status, r.bricksStatus)
		if r.started && !r.bricksRead {
			vs.bricks = prev[r.vol.Name]
		}
		out = append(out, vs)
	}
	return out
}

// appendHealHistory appends a heal record to the cluster's history, which
// it shares with the cluster machine. When the window is full it drops the
// oldest heal record first, so the cluster machine's latest transition
// (from which it times its phase) is never pushed out by heal churn.
func appendHealHistory(h []operatorv1alpha1.TransitionRecord, r operatorv1alpha1.TransitionRecord) []operatorv1alpha1.TransitionRecord {
	h = append(slices.Clone(h), r)
	for len(h) > operatorv1alpha1.MaxHistory {
		keep := -1
		for i := len(h) - 1; i >= 0; i-- {
			if h[i].Machine == "" || h[i].Machine == states.ClusterMachine {
				keep = i
				break
			}
		}
		drop := 0
		if keep == 0 {
			drop = 1
		}
		h = slices.Delete(h, drop, drop+1)
	}
	return h
}

// ownPeer reports whether p is one of c's peers: tagged for c (and a node
// of c's namespace), or untagged (external mode, the founding GD2).
func ownPeer(c *operatorv1alpha1.GlusterCluster, p gd2.Peer) bool {
	node, cl := p.Metadata[transitions.MetaNode], p.Metadata[transitions.MetaCluster]
	return (cl == "" || cl == c.Name) && (node == "" || strings.HasPrefix(node, c.Namespace+"/"))
}

// ownPeers is those of peers that are c's (ownPeer).
func ownPeers(c *operatorv1alpha1.GlusterCluster, peers []gd2.Peer) []gd2.Peer {
	var out []gd2.Peer
	for _, p := range peers {
		if ownPeer(c, p) {
			out = append(out, p)
		}
	}
	return out
}

// ownVolumes drops the volumes whose every brick sits on a peer anthill
// tagged for another GlusterCluster: a GD2 pool shared by several
// clusters (the e2e simulator, or an admin's mistake) must not let one
// cluster's volumes degrade another. Untagged peers (external mode, the
// founding GD2) count as the cluster's own.
func ownVolumes(c *operatorv1alpha1.GlusterCluster, vols []gd2.Volume, peers []gd2.Peer) []gd2.Volume {
	foreign := map[string]bool{}
	for _, p := range peers {
		foreign[p.ID] = !ownPeer(c, p)
	}
	out := vols[:0:0]
	for _, v := range vols {
		bricks := v.Bricks()
		if len(bricks) > 0 && !slices.ContainsFunc(bricks, func(b gd2.BrickInfo) bool { return !foreign[b.PeerID] }) {
			continue
		}
		out = append(out, v)
	}
	return out
}
