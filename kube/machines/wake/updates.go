package wake

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gluster/anthill/fsm"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/states"
)

// OnlyNodeMessage reports whether an update of a GlusterNode changed only
// what the node machine says of its own decision: status.message and the
// conditions, which change at every look of a wait whose count moves (a
// heal's pending entries). No other machine reads them, so such an update
// concerns the node alone; every other change (spec, metadata, state,
// ledger, liveness clocks, ...) concerns every machine that reads nodes.
func OnlyNodeMessage(oldObj, newObj any) bool {
	o, n, ok := both[*operatorv1alpha1.GlusterNode](oldObj, newObj)
	if !ok {
		return false
	}
	os, ns := o.Status, n.Status
	os.Message, ns.Message = "", ""
	os.Conditions, ns.Conditions = nil, nil
	return equality.Semantic.DeepEqual(os, ns) && sameMeta(o.ObjectMeta, n.ObjectMeta) && equality.Semantic.DeepEqual(o.Spec, n.Spec)
}

// sameMeta reports whether two versions of an object's metadata differ in
// nothing but the version and the field managers every write changes.
func sameMeta(om, nm metav1.ObjectMeta) bool {
	om.ResourceVersion, nm.ResourceVersion = "", ""
	om.ManagedFields, nm.ManagedFields = nil, nil
	return equality.Semantic.DeepEqual(om, nm)
}

// ClusterChangeConcernsNodes reports whether an update of a
// GlusterCluster may change the decision of every node of the cluster. A
// node reads its cluster's spec and metadata, status.upgrade (whether it
// is in the batch, see UpgradeConcernsNode) and status.ledger (whether its
// own ledger was copied there); an update that changed only what the
// other machines say of themselves (the heal machine's volumes, the
// disruption machine's state, capacity, counts, autoscaling, conditions,
// history) or only status.upgrade does not wake every node of the
// cluster. Anything else, and an add or delete, does.
func ClusterChangeConcernsNodes(oldObj, newObj any) bool {
	return clusterChangedIn(oldObj, newObj, NodeReads)
}

// NodeReads are the cluster-status fields every node's decision reads
// (beside the spec and metadata): the schema, the phase and the ledger.
// status.upgrade, which a node reads too, wakes only the nodes it
// concerns (UpgradeConcernsNode). The node machine owns none of them.
func NodeReads(st *operatorv1alpha1.GlusterClusterStatus) []any {
	return []any{&st.StatusSchema, &st.Phase, &st.Ledger}
}

// UpgradeConcernsNode reports whether an update of a GlusterCluster
// changed what node reads of status.upgrade: whether the upgrade machine
// has it in the batch it rolls (states.UpgradeRollingServers and
// currentNodes), the batch's members when it is in it (the members ahead
// of it go first), and the version the run rolls to. A new batch wakes
// the nodes that join it and those that leave it, not the rest of the
// cluster. An add or a delete (no old object) concerns every node.
func UpgradeConcernsNode(oldObj, newObj any, node string) bool {
	o, n, ok := both[*operatorv1alpha1.GlusterCluster](oldObj, newObj)
	if !ok {
		return true
	}
	before, after := upgradeSeenBy(o.Status.Upgrade, node), upgradeSeenBy(n.Status.Upgrade, node)
	return before.selected != after.selected || before.toVersion != after.toVersion || !slices.Equal(before.batch, after.batch)
}

// upgradeView is what one node reads of status.upgrade.
type upgradeView struct {
	selected  bool
	batch     []string
	toVersion string
}

func upgradeSeenBy(up *operatorv1alpha1.UpgradeStatus, node string) upgradeView {
	if up == nil {
		return upgradeView{}
	}
	v := upgradeView{toVersion: up.ToVersion}
	if up.State == string(states.UpgradeRollingServers) && slices.Contains(up.CurrentNodes, node) {
		v.selected, v.batch = true, up.CurrentNodes
	}
	return v
}

// ClusterChangeConcernsHeal reports whether an update of a GlusterCluster
// may change a heal decision: the heal machine reads the spec, the
// metadata, the phase, and what it writes itself (status.volumes, the
// history, the conditions and the ledger, where its brick starts go on
// record), and heal-info from GD2, which a change of the other machines'
// slices (the upgrade, the disruption machine's state, capacity, counts,
// autoscaling) does not change. A node's transition, which may, wakes the
// heal machine through the node's informer.
func ClusterChangeConcernsHeal(oldObj, newObj any) bool {
	return clusterChangedIn(oldObj, newObj, HealReads)
}

// HealReads are the cluster-status fields a heal decision reads (beside
// the spec and metadata): the schema, the phase, and what it writes
// itself (status.volumes, the slice it owns), the conditions, the history
// and the ledger.
func HealReads(st *operatorv1alpha1.GlusterClusterStatus) []any {
	return []any{&st.StatusSchema, &st.Phase, &st.Volumes, &st.Conditions, &st.History, &st.Ledger}
}

// ClusterChangeConcernsDisruption reports whether an update of a
// GlusterCluster may change a disruption decision: the disruption machine
// reads the spec, the metadata, the phase, status.volumes (which volumes
// are Healthy) and what it writes itself (status.disruption, the history
// and the conditions); the nodes' states come from the nodes' informer.
func ClusterChangeConcernsDisruption(oldObj, newObj any) bool {
	return clusterChangedIn(oldObj, newObj, DisruptionReads)
}

// DisruptionReads are the cluster-status fields a disruption decision
// reads (beside the spec and metadata): the schema, the phase,
// status.volumes (which volumes are Healthy), and what it writes itself
// (status.disruption, the slice it owns), the conditions and the history.
func DisruptionReads(st *operatorv1alpha1.GlusterClusterStatus) []any {
	return []any{&st.StatusSchema, &st.Phase, &st.Volumes, &st.Disruption, &st.Conditions, &st.History}
}

// ClusterChangeConcernsCluster reports whether an update of a
// GlusterCluster may change the cluster machine's decision: a change of
// the spec, the metadata or a status field in ClusterReads.
func ClusterChangeConcernsCluster(oldObj, newObj any) bool {
	return clusterChangedIn(oldObj, newObj, ClusterReads)
}

// ClusterReads are the cluster-status fields the cluster machine reads
// (beside the spec and metadata): the schema, what it writes itself (the
// phase, node counts, capacity, autoscaler decision and observed
// generation, the slice it owns), the conditions, the history and the
// ledger, and the other machines' reports it summarises: status.volumes
// and status.upgrade. Of the status it reads all but status.disruption.
func ClusterReads(st *operatorv1alpha1.GlusterClusterStatus) []any {
	return []any{&st.StatusSchema, &st.Phase, &st.Nodes, &st.Capacity, &st.Autoscaling, &st.ObservedGeneration,
		&st.Conditions, &st.History, &st.Ledger, &st.Volumes, &st.Upgrade}
}

// ClusterChangeConcernsUpgrade reports whether an update of a
// GlusterCluster may change the upgrade machine's decision: a change of
// the spec, the metadata or a status field in UpgradeReads. The nodes'
// states and versions come from the nodes' informer.
func ClusterChangeConcernsUpgrade(oldObj, newObj any) bool {
	return clusterChangedIn(oldObj, newObj, UpgradeReads)
}

// UpgradeReads are the cluster-status fields an upgrade decision reads
// (beside the spec and metadata): the schema, what it writes itself
// (status.upgrade, the slice it owns, with its run's history and cursor),
// the conditions, the ledger, where the client roll goes on record, and
// status.volumes (which volumes heal before the next batch).
func UpgradeReads(st *operatorv1alpha1.GlusterClusterStatus) []any {
	return []any{&st.StatusSchema, &st.Upgrade, &st.Conditions, &st.Ledger, &st.Volumes}
}

// clusterChangedIn reports whether an update of a GlusterCluster changed
// its spec, its metadata or a status field reads names. An add or a
// delete (no old object), or an object that is not a cluster, always
// counts as a change.
func clusterChangedIn(oldObj, newObj any, reads func(*operatorv1alpha1.GlusterClusterStatus) []any) bool {
	o, n, ok := both[*operatorv1alpha1.GlusterCluster](oldObj, newObj)
	if !ok {
		return true
	}
	before, after := reads(&o.Status), reads(&n.Status)
	for i := range before {
		if !equality.Semantic.DeepEqual(before[i], after[i]) {
			return true
		}
	}
	return !sameMeta(o.ObjectMeta, n.ObjectMeta) || !equality.Semantic.DeepEqual(o.Spec, n.Spec)
}

// VolumeReportsChanged returns the volumes whose record in an updated
// cluster's status.volumes reports something new (states.WakeVolumes):
// the heal machine's state of the volume, its brick count or bricks
// online, or the volume's entry appearing or going. A heal's progress
// (pending entries, message, when it was read) is not a report. An add or
// a delete (no old object) returns none: it wakes every machine anyway.
func VolumeReportsChanged(oldObj, newObj any) []string {
	o, n, ok := both[*operatorv1alpha1.GlusterCluster](oldObj, newObj)
	if !ok {
		return nil
	}
	type report struct {
		state          string
		bricks, online int32
	}
	reports := func(vs []operatorv1alpha1.VolumeStatus) map[string]report {
		m := make(map[string]report, len(vs))
		for _, v := range vs {
			m[v.Name] = report{v.State, v.Bricks, v.BricksOnline}
		}
		return m
	}
	before, after := reports(o.Status.Volumes), reports(n.Status.Volumes)
	var changed []string
	for name, r := range after {
		if b, ok := before[name]; !ok || b != r {
			changed = append(changed, name)
		}
	}
	for name := range before {
		if _, ok := after[name]; !ok {
			changed = append(changed, name)
		}
	}
	slices.Sort(changed)
	return changed
}

// NodeStateChanged reports whether an update of a GlusterNode changed its
// machine's state, or is an add or a delete (no old object): the change of
// the pool that states.WakePool stands for.
func NodeStateChanged(oldObj, newObj any) bool {
	o, n, ok := both[*operatorv1alpha1.GlusterNode](oldObj, newObj)
	return !ok || o.Status.State != n.Status.State
}

// NodeChangeConcernsHeal reports whether an update of a GlusterNode may
// change a heal decision of its cluster. The heal machine reads a node's
// peer, whether its state changes bricks (states.ChangesBricks: a brick
// GD2 left offline there is the node's to bring back, not the heal
// machine's) and, through GD2, whether the node's bricks serve: a node
// stopped, lost or back changes its state's class. A step inside one class
// (an upgrade's Restarting, Rejoining and HealWait) changes none of those,
// and the volumes' heal-info is the heal machine's own periodic look; the
// self-heal daemons heal without it. An add or a delete (no old object)
// concerns it.
func NodeChangeConcernsHeal(oldObj, newObj any) bool {
	o, n, ok := both[*operatorv1alpha1.GlusterNode](oldObj, newObj)
	if !ok {
		return true
	}
	os, ns := fsm.State(o.Status.State), fsm.State(n.Status.State)
	return o.Status.PeerID != n.Status.PeerID || o.Spec.Cluster != n.Spec.Cluster ||
		states.ChangesBricks(os) != states.ChangesBricks(ns) || states.NodeMeaning(os).Class != states.NodeMeaning(ns).Class
}

// both is an update's old and new object as T; false for an add or a
// delete (no old object) or an object of another type.
func both[T any](oldObj, newObj any) (o, n T, ok bool) {
	if o, ok = oldObj.(T); !ok {
		return o, n, false
	}
	n, ok = newObj.(T)
	return o, n, ok
}

// NodeWait is what a node's last decision waits for (the reason of its
// conditions, states.NodeWaitFor); false when it does not wait, or its
// reason is no wait the table knows.
func NodeWait(n *operatorv1alpha1.GlusterNode) (states.NodeWait, bool) {
	c := apimeta.FindStatusCondition(n.Status.Conditions, operatorv1alpha1.ConditionReady)
	if c == nil {
		return states.NodeWait{}, false
	}
	return states.NodeWaitFor(c.Reason)
}

// WokenByVolumes reports whether a new report of one of vols ends n's
// wait: the wait is one on a volume report and, when it names the volumes
// of the node's moved bricks, one of vols is among them.
func WokenByVolumes(n *operatorv1alpha1.GlusterNode, vols []string) bool {
	w, ok := NodeWait(n)
	if !ok || len(vols) == 0 || !w.WokenBy(states.WakeVolumes) {
		return false
	}
	return !w.OnMovedVolumes || slices.ContainsFunc(n.Status.MovedBricks, func(b operatorv1alpha1.BrickRef) bool {
		return slices.Contains(vols, b.Volume)
	})
}

// WokenByPool reports whether another node's change of state ends n's
// wait (states.WakePool).
func WokenByPool(n *operatorv1alpha1.GlusterNode) bool {
	w, ok := NodeWait(n)
	return ok && w.WokenBy(states.WakePool)
}

// Unread are the fields owns names that reads does not: a machine's wake
// reads must cover the status slice it owns (none left), or a change of
// its own slice would not wake it.
func Unread(reads, owns func(*operatorv1alpha1.GlusterClusterStatus) []any) []any {
	var st operatorv1alpha1.GlusterClusterStatus
	read := map[any]bool{}
	for _, f := range reads(&st) {
		read[f] = true
	}
	var out []any
	for _, f := range owns(&st) {
		if !read[f] {
			out = append(out, f)
		}
	}
	return out
}
