package node

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gluster/anthill/fsm"
	"github.com/gluster/anthill/gd2"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/effects"
	"github.com/gluster/anthill/kube/machines/gather"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
	"github.com/gluster/anthill/transitions"
)

// DefaultUpgradeStepTimeout bounds Restarting and Rejoining of one node.
const DefaultUpgradeStepTimeout = 15 * time.Minute

// nodeGD2Side is what one sync learned about a node beyond the snapshot:
// the objects and GD2 records the action target is built from.
type nodeGD2Side struct {
	peer     *gd2.Peer
	peers    []gd2.Peer
	analysis states.PeerBricks
	// sharing are the peers that share a replica set with the node's.
	sharing map[string]bool
	// registered are the names of the devices GD2 has on the node's
	// peer, sorted: the names a device is enabled and disabled by, which
	// stay what they were registered as (a node an older release joined
	// has its claims registered as /dev/sdb, ...).
	registered []string
	// gd2Err is why the GD2 side could not be read (the snapshot then
	// has GD2Reachable false).
	gd2Err error
}

// nodeSnapshot gathers a NodeSnapshot from listers and live GD2 reads. A GD2
// failure makes GD2Reachable false (the decision then waits); it is not an
// error. An error means the snapshot could not be trusted at all.
func (s *Syncer) nodeSnapshot(ctx context.Context, node *operatorv1alpha1.GlusterNode, cluster *operatorv1alpha1.GlusterCluster, state fsm.State, gc effects.GD2Reader) (states.NodeSnapshot, nodeGD2Side, error) {
	now := s.Clock.Now()
	snap := states.NodeSnapshot{
		State:              state,
		Now:                now,
		Name:               node.Name,
		RecordedPeerID:     node.Status.PeerID,
		DrainCause:         drainCause(node),
		Deleting:           node.DeletionTimestamp != nil,
		ClusterDeleting:    cluster.DeletionTimestamp != nil,
		Paused:             cluster.Spec.Paused,
		Off:                objects.AutomationOff(cluster),
		Request:            states.NodeRequest(node.Annotations[objects.AnnotationRequest]),
		Disabled:           node.Spec.DesiredState == operatorv1alpha1.NodeDisabled,
		TargetVersion:      objects.ClusterVersion(cluster),
		TargetRevision:     objects.NodeTemplateRevision(cluster, node),
		UpgradeStepTimeout: DefaultUpgradeStepTimeout,
		PeerWatched:        s.PeerWatched,
		MaxParallelMoves:   objects.MaxParallelMoves(cluster),
	}
	snap.PermissibleDowntime, snap.OfflineGrace, snap.RecoveryWindow = gather.FailureWindows(cluster)
	if t := node.Status.LastTransitionTime; t != nil {
		snap.StateSince = t.Time
	}
	if d := node.Status.DownSince; d != nil {
		snap.DownSince = d.Time
	}
	if a := node.Status.AliveSince; a != nil {
		snap.AliveSince = a.Time
	}
	if up := cluster.Status.Upgrade; up != nil {
		snap.UpgradeSelected = up.State == string(states.UpgradeRollingServers) && slices.Contains(up.CurrentNodes, node.Name)
		if up.ToVersion != "" {
			snap.TargetVersion = up.ToVersion
		}
	}
	if err := s.kubeSide(node, &snap); err != nil {
		return snap, nodeGD2Side{}, err
	}
	if err := s.joinAfter(node, &snap); err != nil {
		return snap, nodeGD2Side{}, err
	}
	var view nodeGD2Side
	if gc == nil || !decisionReadsGD2(snap) {
		return snap, view, nil
	}
	if err := s.gd2Side(ctx, node, gc, &snap, &view); err != nil {
		if errors.Is(err, context.Canceled) {
			return snap, view, err
		}
		// Any GD2 failure makes the whole GD2 side unknown: counts gathered
		// halfway would read as "zero bricks", the unsafe answer.
		s.log(node).Debug("GD2 read failed; deciding without GD2")
		snap.GD2Reachable = false
		snap.PeerKnown, snap.PeerAlive, snap.PeerID = false, false, ""
		clearBrickCounts(&snap)
		view = nodeGD2Side{gd2Err: err}
	}
	if at := (types.NamespacedName{Namespace: node.Namespace, Name: node.Name}); state == states.NodeHealWait && snap.GD2Reachable {
		snap.LastHealReading = s.heals.observe(at, states.HealReading{Pending: snap.PendingHealEntries, At: now})
	} else {
		s.heals.forget(at)
	}
	if state == states.NodeOffline && snap.PeerKnown && !snap.PeerAlive {
		s.lostPodSide(ctx, node, &snap)
	}
	if state == states.NodeQuiescing && snap.UpgradeSelected && snap.GD2Reachable {
		ahead, err := s.upgradeAhead(node, cluster, snap.TargetVersion, view.sharing)
		if err != nil {
			return snap, view, err
		}
		snap.UpgradeAhead = ahead
	}
	return snap, view, nil
}

// upgradeAhead is states.UpgradeTurnsAhead over the cluster's upgrade
// batch (a version upgrade or a template rollout), its members read from
// the node lister. A member the lister does not have is gone and stops
// nothing.
func (s *Syncer) upgradeAhead(node *operatorv1alpha1.GlusterNode, cluster *operatorv1alpha1.GlusterCluster, target string, sharing map[string]bool) ([]string, error) {
	var batch []states.BatchMember
	for _, name := range cluster.Status.Upgrade.CurrentNodes {
		if name == node.Name {
			batch = append(batch, states.BatchMember{Name: name})
			continue
		}
		m, err := s.Nodes.GlusterNodes(node.Namespace).Get(name)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return nil, fmt.Errorf("upgrade batch member %q: %w", name, err)
		}
		// Done as the upgrade machine counts it: Online at the target
		// version and at the pod template the cluster gives it now.
		done := m.Status.State == string(states.NodeOnline) && (target == "" || m.Status.Version == target) &&
			m.Status.Revision == objects.NodeTemplateRevision(cluster, m)
		batch = append(batch, states.BatchMember{Name: name, PeerID: m.Status.PeerID, Done: done})
	}
	return states.UpgradeTurnsAhead(node.Name, batch, sharing), nil
}

// decisionReadsGD2 reports whether the node's decision can depend on GD2
// (states.NodeReadsGD2).
func decisionReadsGD2(s states.NodeSnapshot) bool { return states.NodeReadsGD2(s) }

// decisionReadsBricks reports whether the node's decision in state can use
// volumes, brick status or heal-info (states.NodeStateMeaning.ReadsBricks).
func decisionReadsBricks(st fsm.State) bool { return states.NodeMeaning(st).ReadsBricks }

// onlyLivePoolMember reports whether self is the only member of the pool
// apart from tombstones: peers anthill abandoned (metadata anthill-state
// Abandoned) that are dead and hold no brick. GD2 cannot delete those, and
// they must not keep the last real member of a cluster being deleted from
// leaving with its pool.
func onlyLivePoolMember(self string, peers []gd2.Peer, vols []gd2.Volume) bool {
	hasBricks := map[string]bool{}
	for _, v := range vols {
		for _, b := range v.Bricks() {
			hasBricks[b.PeerID] = true
		}
	}
	for _, p := range peers {
		if p.ID == self {
			continue
		}
		tombstone := !p.Online && fsm.State(p.Metadata[transitions.MetaState]) == states.NodeAbandoned && !hasBricks[p.ID]
		if !tombstone {
			return false
		}
	}
	return true
}

func clearBrickCounts(s *states.NodeSnapshot) {
	s.DevicesEnabled, s.DevicesDisabled = 0, 0
	s.BricksOnNode, s.BricksOffline, s.SoleHealedCopies, s.QuorumAtRisk = 0, 0, 0, 0
	s.ReplacementsHealing, s.PendingHealEntries, s.SplitBrainEntries, s.BricksUnreachable = 0, 0, 0, 0
	s.ReplacementsFilling, s.HealReplacementVolume, s.HealReplacementBrick, s.HealReplacementNodeDown = 0, "", "", ""
	s.NextBrickVolume, s.NextBrickPath, s.DrainBlockedReason, s.VolumeNodeDown = "", "", "", ""
	s.NextBrickPlan, s.HealReplacementDue, s.HealReplacementOptions = states.MovePlan{}, nil, nil
}

// drainCause is the reason of the node's latest transition into Draining,
// from its history; "" when the window no longer holds it.
func drainCause(node *operatorv1alpha1.GlusterNode) string {
	h := node.Status.History
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].To == string(states.NodeDraining) && h[i].From != string(states.NodeDraining) {
			return h[i].Reason
		}
	}
	return ""
}

// kubeSide fills the pod and PVC facts from the listers.
func (s *Syncer) kubeSide(node *operatorv1alpha1.GlusterNode, snap *states.NodeSnapshot) error {
	if node.Spec.ExternalAddress != "" {
		// An external node runs no pod and has no claims: treat its
		// workload as present and ready, GD2 liveness decides the rest.
		snap.PodExists, snap.PodReady, snap.PVCExists, snap.PVCBound = true, true, true, true
		snap.RunningVersion, snap.RunningRevision = snap.TargetVersion, snap.TargetRevision
		return nil
	}
	pod, err := s.Pods.Pods(node.Namespace).Get(objects.NodePodName(node.Name))
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return err
	default:
		snap.PodExists = pod.DeletionTimestamp == nil
		snap.PodReady = snap.PodExists && objects.PodReady(pod)
		if snap.PodReady {
			snap.RunningVersion = pod.Annotations[objects.AnnotationVersion]
			snap.RunningRevision = pod.Annotations[objects.AnnotationRevision]
		}
	}
	devices := objects.NodeDevicePaths(node)
	bound := 0
	for i := range devices {
		pvc, err := s.PVCs.PersistentVolumeClaims(node.Namespace).Get(objects.BrickClaimName(node.Name, i))
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return err
		}
		snap.PVCExists = true
		if pvc.Status.Phase == corev1.ClaimBound {
			bound++
		}
	}
	snap.PVCBound = bound == len(devices)
	return nil
}

// gd2Side reads peers, devices, volumes, brick status and heal-info.
func (s *Syncer) gd2Side(ctx context.Context, node *operatorv1alpha1.GlusterNode, gc effects.GD2Reader, snap *states.NodeSnapshot, view *nodeGD2Side) error {
	peers, err := gc.ListPeers(ctx, gd2.Filter{})
	if err != nil {
		return fmt.Errorf("list peers: %w", err)
	}
	snap.GD2Reachable = true
	view.peers = peers
	view.peer = nodePeer(node, peers)
	if view.peer == nil {
		return nil
	}
	p := view.peer
	snap.PeerKnown, snap.PeerID, snap.PeerAlive = true, p.ID, p.Online

	devices, err := gc.ListAllDevices(ctx)
	if err != nil {
		return fmt.Errorf("list devices: %w", err)
	}
	snap.DevicesEnabled, snap.DevicesDisabled = peerDevices(p.ID, devices)
	view.registered = peerDeviceNames(p.ID, devices)
	if !decisionReadsBricks(snap.State) {
		return nil
	}
	vols, err := gc.ListVolumes(ctx, gd2.Filter{})
	if err != nil {
		return fmt.Errorf("list volumes: %w", err)
	}
	snap.OnlyPeer = onlyLivePoolMember(p.ID, peers, vols)
	moved := movedRefs(node)
	views, err := peerVolumeFacts(ctx, gc, vols, p.ID, moved)
	if err != nil {
		return err
	}
	// GD2 reads heal-info 0 while a replacement is empty: every brick a
	// drain moved is judged by its size until its data shows
	// (states.MarkReplacements).
	movedBy, heals := s.replacements(node, p.ID, moved)
	views = states.MarkReplacements(views, movedBy, heals)
	a := states.AnalyzePeer(p.ID, views, moved)
	view.analysis = a
	view.sharing = states.PeersSharingSets(p.ID, views)
	snap.BricksOnNode, snap.BricksOffline = a.OnPeer, a.Offline
	snap.SoleHealedCopies, snap.QuorumAtRisk = a.SoleHealedCopies, a.QuorumAtRisk
	snap.ReplacementsHealing, snap.ReplacementsFilling = a.Unhealed, a.Filling
	if snap.State == states.NodeDraining {
		due := states.ReplacementHealDue(views, moved, heals, snap.Now)
		if len(due) > 0 {
			snap.HealReplacementVolume, snap.HealReplacementBrick = due[0].Volume, due[0].Path
			snap.HealReplacementOptions = effects.ReplacementHealOptions()
			for _, r := range due {
				if r.Volume == due[0].Volume {
					snap.HealReplacementDue = append(snap.HealReplacementDue, r)
				}
			}
			// The heal sets volume options: GD2 runs that on every
			// peer of the pool.
			snap.HealReplacementNodeDown = states.PoolNodesDown(gather.PeerFacts(peers))
		}
	}
	snap.PendingHealEntries, snap.SplitBrainEntries = a.PendingHealEntries, a.SplitBrainEntries
	snap.BricksUnreachable = a.Unreachable
	facts := states.DrainFacts{
		Source: p.ID, Movable: a.Movable, Volumes: views,
		Peers: gather.PeerFacts(peers), Devices: gather.DeviceFacts(devices),
		FormerHolders: s.formerHolders(node), Refused: node.Status.RefusedPeers,
		InFlight: a.Unhealed,
	}
	next := states.NextMove(facts)
	snap.VolumeNodeDown = next.NodeDown
	// The brick to move now: NextMove's when nothing is in flight, else
	// one that may move beside the replacements still healing. None while
	// some are in flight, with a brick NextMove could move, means every
	// such brick waits for a heal (its set is not healed, or the bound is
	// reached): the decision then waits for the heal, not for a block.
	if moves := states.NextMoves(facts, snap.MaxParallelMoves); len(moves) > 0 {
		snap.NextBrickVolume, snap.NextBrickPath = moves[0].Brick.Volume, moves[0].Brick.Path
		snap.NextBrickPlan = moves[0].Plan
	} else if !next.Found {
		snap.DrainBlockedReason = next.Blocked
	}
	return nil
}

// nodePeer is node's peer in peers: the one anthill's join labelled with
// the node (metadata anthill-node), or the one of the peer id the node
// recorded; nil when GD2 lists neither.
func nodePeer(node *operatorv1alpha1.GlusterNode, peers []gd2.Peer) *gd2.Peer {
	key := node.Namespace + "/" + node.Name
	for i := range peers {
		p := &peers[i]
		if p.Metadata[transitions.MetaNode] == key || (node.Status.PeerID != "" && p.ID == node.Status.PeerID) {
			return p
		}
	}
	return nil
}

// peerDeviceNames are the names of peer's devices in devices, sorted.
func peerDeviceNames(peer string, devices []gd2.Device) []string {
	var out []string
	for _, d := range devices {
		if d.PeerID == peer {
			out = append(out, d.Device)
		}
	}
	slices.Sort(out)
	return out
}

// peerDevices counts peer's devices in devices by state: enabled, and
// any other (disabled).
func peerDevices(peer string, devices []gd2.Device) (enabled, disabled int) {
	for _, d := range devices {
		switch {
		case d.PeerID != peer:
		case d.State == gd2.DeviceEnabled:
			enabled++
		default:
			disabled++
		}
	}
	return enabled, disabled
}

// formerHolders maps each brick moved off a node of the cluster to the
// peers that held it: GD2 leaves the replaced brick's logical volume there
// (see states.ClashPeers).
func (s *Syncer) formerHolders(node *operatorv1alpha1.GlusterNode) map[states.BrickRef][]string {
	out := map[states.BrickRef][]string{}
	nodes, err := s.Nodes.GlusterNodes(node.Namespace).List(labels.Everything())
	if err != nil {
		return out
	}
	return formerHoldersAmong(node.Spec.Cluster, nodes)
}

// formerHoldersAmong is formerHolders over nodes, the GlusterNodes of the
// node's namespace.
func formerHoldersAmong(cluster string, nodes []*operatorv1alpha1.GlusterNode) map[states.BrickRef][]string {
	out := map[states.BrickRef][]string{}
	for _, n := range nodes {
		if n.Spec.Cluster != cluster || n.Status.PeerID == "" {
			continue
		}
		for _, list := range [][]operatorv1alpha1.BrickRef{n.Status.LeftBricks, n.Status.MovedBricks} {
			for _, r := range list {
				ref := states.BrickRef{Volume: r.Volume, Path: r.Path}
				if !slices.Contains(out[ref], n.Status.PeerID) {
					out[ref] = append(out[ref], n.Status.PeerID)
				}
			}
		}
	}
	return out
}

// replacements are the bricks drains moved, each with the peer it moved
// off, and when anthill last made GD2 heal each replacement: node's own
// moves (moved, off peer) and those of the other nodes of its cluster that
// are Draining now. A replacement of either kind is no healed copy until
// its data shows, so no drain moves the last good copy of a set beside
// an empty replacement. Moves of a drain that ended (resumed, or its node
// gone) are no longer followed.
func (s *Syncer) replacements(node *operatorv1alpha1.GlusterNode, peer string, moved []states.BrickRef) (map[states.BrickRef]string, []states.ReplacementHeal) {
	movedBy := map[states.BrickRef]string{}
	heals := replacementHeals(node)
	if nodes, err := s.Nodes.GlusterNodes(node.Namespace).List(labels.Everything()); err == nil {
		for _, n := range nodes {
			if n.Name == node.Name || n.Spec.Cluster != node.Spec.Cluster || n.Status.PeerID == "" || n.Status.State != string(states.NodeDraining) {
				continue
			}
			for _, r := range n.Status.MovedBricks {
				movedBy[states.BrickRef{Volume: r.Volume, Path: r.Path}] = n.Status.PeerID
			}
			heals = append(heals, replacementHeals(n)...)
		}
	}
	for _, r := range moved {
		movedBy[r] = peer
	}
	return movedBy, heals
}

// replacementHeals is the node's status.replacementHeals.
func replacementHeals(n *operatorv1alpha1.GlusterNode) []states.ReplacementHeal {
	out := make([]states.ReplacementHeal, 0, len(n.Status.ReplacementHeals))
	for _, h := range n.Status.ReplacementHeals {
		out = append(out, states.ReplacementHeal{Brick: states.BrickRef{Volume: h.Volume, Path: h.Path}, At: h.Time.Time})
	}
	return out
}

// movedRefs are the bricks the node's drain moved, to be watched until
// their replica sets heal (states.AnalyzePeer's Unhealed: the drain's moves
// in flight).
//
// A move is on record in the node's ledger before its replace-brick is
// sent (the runner's engine.Ledger), and in movedBricks only once the status write after
// it succeeds: an operator killed in between would lose track of a
// replacement that heals, and could start a move beyond
// drainPolicy.maxParallelMoves, or detach the node, before it healed. So
// the moves the ledger records since the node entered its current drain
// count too; one whose replace-brick never ran still has its brick on the
// node, and is not watched.
func movedRefs(node *operatorv1alpha1.GlusterNode) []states.BrickRef {
	st := node.Status
	out := make([]states.BrickRef, 0, len(st.MovedBricks))
	for _, m := range st.MovedBricks {
		out = append(out, states.BrickRef{Volume: m.Volume, Path: m.Path})
	}
	if st.State != string(states.NodeDraining) || st.LastTransitionTime == nil {
		return out
	}
	for _, e := range st.Ledger {
		if e.Action != operatorv1alpha1.LedgerActionReplaceBrick || e.Time.Before(st.LastTransitionTime) {
			continue
		}
		if ref := (states.BrickRef{Volume: e.Volume, Path: e.Brick}); !slices.Contains(out, ref) {
			out = append(out, ref)
		}
	}
	return out
}

// volumeConcerns: the volume has a brick on peer, or a brick this node moved.
func volumeConcerns(v gd2.Volume, peer string, moved []states.BrickRef) bool {
	for _, b := range v.Bricks() {
		if b.PeerID == peer {
			return true
		}
		for _, m := range moved {
			if m.Volume == v.Name && m.Path == b.Path {
				return true
			}
		}
	}
	return false
}

// LiveGD2 is what the facts of a live decision (`kubectl gluster explain`)
// show of GD2: whether the decision depends on GD2 answering (needed),
// whether GD2 answered (read), and why not (err).
func (s *Syncer) LiveGD2(f *nodeFacts) (needed, read bool, err error) {
	switch {
	case f.cluster == nil || f.snap.State == "":
		// No cluster, or an external one: the decision reads no GD2.
		return false, false, nil
	case f.snap.GD2Reachable:
		return true, true, nil
	}
	return decisionReadsGD2(f.snap), false, errors.Join(f.gd2Err, f.view.gd2Err)
}
