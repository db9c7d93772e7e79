package kube

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
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/gluster/anthill/fsm"
	"github.com/gluster/anthill/gd2"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/client/clientset/versioned"
	listers "github.com/gluster/anthill/kube/client/listers/operator/v1alpha1"
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
	Anthill  versioned.Interface
	GD2      *GD2Clients
	Log      *TransitionLog
	Clock    clock.Clock

	// Zero values take the Default* constants.
	Interval     time.Duration
	MaxBackoff   time.Duration
	Workers      int
	StallTimeout time.Duration
	// Jitter returns a number in [0, 1); nil uses math/rand/v2.
	Jitter func() float64

	mu sync.Mutex
	// backoff is the current back-off interval per key (absent: none).
	backoff map[Key]time.Duration
	// progress remembers, per volume in Healing, the last pending count and
	// when it last fell (status has no field for it; after a restart the
	// state's start time is used, which at worst re-triggers a heal).
	progress map[string]healProgress
}

// healActionError is a failed heal action: the state stays, and the
// syncer backs off before retrying.
type healActionError struct{ err error }

func (e *healActionError) Error() string { return e.err.Error() }
func (e *healActionError) Unwrap() error { return e.err }

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

func (s *HealSyncer) log(key Key) *zap.Logger {
	return s.Log.Log.With(zap.String(LogMachine, states.HealMachine), zap.String(LogNamespace, key.Namespace), zap.String(LogName, key.Name))
}

// Sync refreshes the heal machines of the cluster named by key.
func (s *HealSyncer) Sync(ctx context.Context, key Key) (Result, error) {
	cached, err := s.Clusters.GlusterClusters(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		s.forget(key)
		return Result{}, nil
	}
	if err != nil {
		return Result{}, err
	}
	if cached.Status.Phase == operatorv1alpha1.ClusterPhase(states.ClusterDeleted) {
		s.forget(key)
		return Result{}, nil
	}
	c := cached.DeepCopy()
	now := s.Clock.Now()

	var gc *gd2.Client
	var vols []gd2.Volume
	gc, gd2Err := s.GD2.For(ctx, c)
	if gd2Err == nil {
		vols, gd2Err = gc.ListVolumes(ctx, gd2.Filter{})
		if gd2Err != nil {
			gd2Err = fmt.Errorf("list volumes: %w", gd2Err)
		} else {
			var peers []gd2.Peer
			if peers, gd2Err = gc.ListPeers(ctx, gd2.Filter{}); gd2Err != nil {
				gd2Err = fmt.Errorf("list peers: %w", gd2Err)
			}
			vols = ownVolumes(c, vols, peers)
		}
	}
	if gd2Err != nil && errors.Is(gd2Err, context.Canceled) {
		return Result{}, gd2Err
	}

	var readings []healReading
	if gd2Err == nil {
		readings = s.read(ctx, gc, vols)
	} else {
		// GD2 did not answer: every volume already in status is re-decided
		// with no reading (lostContact); none is dropped, since the volume
		// list is unknown.
		for _, v := range c.Status.Volumes {
			readings = append(readings, healReading{vol: gd2.Volume{Name: v.Name}, redundant: true, started: true, err: gd2Err})
		}
	}

	old := map[string]operatorv1alpha1.VolumeStatus{}
	for _, v := range c.Status.Volumes {
		old[v.Name] = v
	}
	var ops transitions.GD2Ops = noGD2{}
	if gc != nil {
		ops = &GD2Ops{Client: gc}
	}
	var (
		committed    []Committed
		entries      []operatorv1alpha1.VolumeStatus
		errs         []error // GD2 reads and actions that failed
		other        []error // decisions refused (unknown states)
		readsOK      int
		actionFailed bool
		next         = s.interval()
	)
	if gd2Err != nil {
		errs = append(errs, gd2Err)
	}
	for _, r := range readings {
		if r.err != nil && gd2Err == nil {
			errs = append(errs, r.err)
		}
		if r.ok {
			readsOK++
		}
		entry, cm, d, err := s.volume(ctx, c, old[r.vol.Name], r, ops, now)
		if perr := (*PermanentError)(nil); errors.As(err, &perr) {
			other = append(other, err)
		} else if err != nil {
			errs = append(errs, err)
		}
		entries = append(entries, entry)
		if cm != nil {
			committed = append(committed, *cm)
		}
		if errors.As(err, new(*healActionError)) {
			actionFailed = true
		}
		if d.RequeueAfter > 0 && d.RequeueAfter < next {
			next = d.RequeueAfter
		}
	}
	slices.SortFunc(entries, func(a, b operatorv1alpha1.VolumeStatus) int { return strings.Compare(a.Name, b.Name) })
	s.pruneProgress(key, entries)

	before := c.Status.DeepCopy()
	c.Status.Volumes = entries
	for _, cm := range committed {
		c.Status.History = appendHealHistory(c.Status.History, cm.Record())
	}
	if !equality.Semantic.DeepEqual(before, &c.Status) {
		updated, err := s.Anthill.OperatorV1alpha1().GlusterClusters(c.Namespace).UpdateStatus(ctx, c, metav1.UpdateOptions{})
		if err != nil {
			// Nothing was persisted, so nothing is announced; the next
			// sync decides again from live GD2 state (the one action,
			// triggering a heal, is idempotent).
			return Result{}, fmt.Errorf("persist heal status of %d volume(s): %w", len(entries), err)
		}
		for _, cm := range committed {
			s.Log.Announce(updated, cm)
		}
	}

	if gd2Err == nil {
		s.mirror(ctx, key, ops, readings, c.Status.Volumes)
	}

	if len(other) > 0 {
		s.log(key).Info("heal decisions refused", zap.Error(errors.Join(other...)))
	}
	// Back off while GD2 fails: the volume list could not be read, every
	// heal-info read failed, or an action failed. One unreadable volume
	// among readable ones keeps the normal interval for the others' sake.
	failing := gd2Err != nil || (len(errs) > 0 && readsOK == 0) || actionFailed
	if failing {
		s.log(key).Info("heal refresh failed; backing off", zap.Error(errors.Join(errs...)))
		return Result{RequeueAfter: s.nextBackoff(key)}, nil
	}
	if len(errs) > 0 {
		s.log(key).Info("heal refresh partly failed", zap.Error(errors.Join(errs...)))
	}
	s.resetBackoff(key)
	return Result{RequeueAfter: s.jitter(next)}, nil
}

// read gathers the heal reading of every volume, at most workers GD2
// calls at a time. Results keep the order of vols.
func (s *HealSyncer) read(ctx context.Context, gc gd2Reads, vols []gd2.Volume) []healReading {
	out := make([]healReading, len(vols))
	sem := make(chan struct{}, s.workers())
	var wg sync.WaitGroup
	for i, v := range vols {
		out[i] = healReading{vol: v, redundant: redundant(v), started: v.State == gd2.VolumeStarted}
		if !out[i].redundant || !out[i].started {
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
			vv, err := readVolume(ctx, gc, v)
			if err != nil {
				out[i].err = err
				return
			}
			out[i].ok = true
			for _, sv := range vv.Subvols {
				if !sv.Replica {
					continue
				}
				for _, b := range sv.Bricks {
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

// volume decides one volume and returns its new status entry, the
// transition committed in it (nil for none) and the decision.
func (s *HealSyncer) volume(ctx context.Context, c *operatorv1alpha1.GlusterCluster, prev operatorv1alpha1.VolumeStatus, r healReading, ops transitions.GD2Ops, now time.Time) (operatorv1alpha1.VolumeStatus, *Committed, states.Decision, error) {
	entry := prev
	entry.Name = r.vol.Name
	state := fsm.State(prev.State)
	if state == "" {
		state = healDef.Initial
		entry.State = string(state)
	}
	m, err := healDef.NewMachine(state)
	if err != nil {
		// Never reset an unknown state: an admin must look.
		msg := fmt.Sprintf("volume %s: %v", r.vol.Name, err)
		s.Log.Warn(c, states.ReasonUnknownState, msg)
		return prev, nil, states.Decision{}, &PermanentError{Err: errors.New(msg)}
	}
	if r.ok {
		entry.PendingEntries, entry.SplitBrainEntries = r.pending, r.split
	} else if !r.redundant {
		entry.PendingEntries, entry.SplitBrainEntries = 0, 0
	}
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
	d := states.DecideHeal(snap)
	if d.Event == "" {
		if d.Warning && entry.Message != d.Message {
			s.Log.Warn(c, d.Reason, fmt.Sprintf("volume %s: %s", r.vol.Name, d.Message))
		}
		entry.Message = d.Message
		return entry, nil, d, nil
	}
	if !m.Can(d.Event) {
		err := fmt.Errorf("volume %s: decision %s is not allowed in state %s", r.vol.Name, d.Event, state)
		s.Log.Warn(c, states.ReasonUnknownState, err.Error())
		return prev, nil, d, &PermanentError{Err: err}
	}
	if a, ok := transitions.HealActions.Event(d.Event); ok {
		if err := a(ctx, transitions.Ops{GD2: ops}, transitions.VolumeTarget{Cluster: c.Name, Volume: r.vol.Name}); err != nil {
			msg := fmt.Sprintf("volume %s: %s failed: %v", r.vol.Name, d.Event, err)
			s.Log.Warn(c, refusalReason(err), msg)
			entry.Message = truncate(msg, 1024)
			return entry, nil, d, &healActionError{err: err}
		}
	}
	tr, err := m.Fire(ctx, d.Event)
	if err != nil {
		return prev, nil, d, err
	}
	entry.State = string(tr.To)
	entry.LastTransitionTime = &metav1.Time{Time: now}
	entry.Message = d.Message
	cm := &Committed{
		Machine: states.HealMachine, Namespace: c.Namespace, Name: c.Name, Subject: r.vol.Name,
		From: tr.From[0], To: tr.To, Event: tr.Event, Reason: d.Reason, Message: d.Message, Time: now,
	}
	return entry, cm, d, nil
}

// mirror writes each volume's heal state, as now persisted in
// status.volumes, into the volume's GD2 metadata (MetaHealState,
// MetaHealSince) where the volume read this sync does not already carry
// it. It runs after the status write, so GD2 never shows a state that
// status does not hold; only volumes in status.volumes (the cluster's own,
// seen in GD2 this sync) are written. A failure is logged and repaired by
// the next sync, which compares again; it never fails the sync.
func (s *HealSyncer) mirror(ctx context.Context, key Key, ops transitions.GD2Ops, readings []healReading, entries []operatorv1alpha1.VolumeStatus) {
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
		if err := transitions.MirrorHealState(ctx, ops, e.Name, md); err != nil {
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
func (s *HealSyncer) pruneProgress(key Key, entries []operatorv1alpha1.VolumeStatus) {
	s.mu.Lock()
	defer s.mu.Unlock()
	prefix := key.Namespace + "/" + key.Name + "/"
	for k := range s.progress {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		name := strings.TrimPrefix(k, prefix)
		if !slices.ContainsFunc(entries, func(v operatorv1alpha1.VolumeStatus) bool { return v.Name == name }) {
			delete(s.progress, k)
		}
	}
}

func (s *HealSyncer) nextBackoff(key Key) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.backoff == nil {
		s.backoff = map[Key]time.Duration{}
	}
	b := s.backoff[key]
	if b == 0 {
		b = s.interval()
	}
	b = min(2*b, s.maxBackoff())
	s.backoff[key] = b
	return min(s.jitter(b), s.maxBackoff())
}

func (s *HealSyncer) resetBackoff(key Key) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.backoff, key)
}

// forget drops what the syncer remembers of a deleted cluster.
func (s *HealSyncer) forget(key Key) {
	s.mu.Lock()
	delete(s.backoff, key)
	s.mu.Unlock()
	s.pruneProgress(key, nil)
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

// ownVolumes drops the volumes whose every brick sits on a peer anthill
// tagged for another GlusterCluster: a GD2 pool shared by several
// clusters (the e2e simulator, or an admin's mistake) must not let one
// cluster's volumes degrade another. Untagged peers (external mode, the
// founding GD2) count as the cluster's own.
func ownVolumes(c *operatorv1alpha1.GlusterCluster, vols []gd2.Volume, peers []gd2.Peer) []gd2.Volume {
	foreign := map[string]bool{}
	for _, p := range peers {
		node, cl := p.Metadata[transitions.MetaNode], p.Metadata[transitions.MetaCluster]
		if node == "" && cl == "" {
			continue
		}
		ours := (cl == "" || cl == c.Name) && (node == "" || strings.HasPrefix(node, c.Namespace+"/"))
		foreign[p.ID] = !ours
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
