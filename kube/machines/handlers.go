package machines

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	listers "github.com/gluster/anthill/kube/client/listers/operator/v1alpha1"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/kube/machines/gather"
	"github.com/gluster/anthill/kube/machines/wake"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
)

// Key constructors for the machines the dispatcher runs.

// keyMapper turns informer objects into the machine keys they concern. It
// reads only listers (no I/O), as informer handlers must.
type keyMapper struct {
	nodes    listers.GlusterNodeLister
	clusters listers.GlusterClusterLister
	// byUse is the clusters' store, indexed by usesIndex (forPV).
	byUse cache.Indexer
}

// forCluster: a cluster's own machine, its volumes' heal machines, and its
// nodes (whose decisions read the cluster's spec and upgrade status).
func (k keyMapper) forCluster(obj any) []engine.Key {
	c, ok := obj.(*operatorv1alpha1.GlusterCluster)
	if !ok {
		return nil
	}
	keys := []engine.Key{gather.ClusterKey(c.Namespace, c.Name), gather.HealKey(c.Namespace, c.Name), gather.UpgradeKey(c.Namespace, c.Name)}
	nodes, _ := k.nodes.GlusterNodes(c.Namespace).List(labels.Everything())
	for _, n := range nodes {
		if n.Spec.Cluster == c.Name {
			keys = append(keys, gather.NodeKey(n.Namespace, n.Name))
		}
	}
	return keys
}

// forClusterUpdate is forCluster for the cluster informer's deliveries:
// each machine is woken only by a change of what its decisions read
// (wake.ClusterChangeConcernsNodes, wake.ClusterChangeConcernsHeal,
// wake.ClusterChangeConcernsCluster, wake.ClusterChangeConcernsUpgrade),
// and a node by the upgrade's batch only when it joins or leaves it, or
// its batch or target changes (wake.UpgradeConcernsNode). A change of
// what the heal machine reports of a volume (wake.VolumeReportsChanged)
// wakes the nodes whose wait it ends (wake.WokenByVolumes): a drain
// waiting for its replacements to heal looks as soon as their heal is
// recorded.
func (k keyMapper) forClusterUpdate(oldObj, newObj any) []engine.Key {
	keys := k.forCluster(newObj)
	if oldObj == nil {
		return keys
	}
	nodes, heal := wake.ClusterChangeConcernsNodes(oldObj, newObj), wake.ClusterChangeConcernsHeal(oldObj, newObj)
	cluster, upgrade := wake.ClusterChangeConcernsCluster(oldObj, newObj), wake.ClusterChangeConcernsUpgrade(oldObj, newObj)
	reported := wake.VolumeReportsChanged(oldObj, newObj)
	return slices.DeleteFunc(keys, func(key engine.Key) bool {
		switch key.Machine {
		case states.NodeMachine:
			return !nodes && !wake.UpgradeConcernsNode(oldObj, newObj, key.Name) &&
				!k.nodeWokenBy(key, func(n *operatorv1alpha1.GlusterNode) bool { return wake.WokenByVolumes(n, reported) })
		case states.HealMachine:
			return !heal
		case states.ClusterMachine:
			return !cluster
		case states.UpgradeMachine:
			return !upgrade
		}
		return false
	})
}

// nodeWokenBy reports whether the node of key, as the lister has it, is
// one wake says a report ends the wait of.
func (k keyMapper) nodeWokenBy(key engine.Key, wake func(*operatorv1alpha1.GlusterNode) bool) bool {
	n, err := k.nodes.GlusterNodes(key.Namespace).Get(key.Name)
	return err == nil && wake(n)
}

// forNode: the node's machine, its cluster's cluster and upgrade machines
// (which count nodes by state and version), and its cluster's heal
// machines: a node that stopped, came back or finished healing changes
// what heal-info says, and the upgrade machine waits on status.volumes
// before it picks the next node, so that must not wait for the timer.
func (k keyMapper) forNode(obj any) []engine.Key {
	n, ok := obj.(*operatorv1alpha1.GlusterNode)
	if !ok {
		return nil
	}
	ns, c := n.Namespace, n.Spec.Cluster
	return []engine.Key{gather.NodeKey(ns, n.Name), gather.ClusterKey(ns, c), gather.UpgradeKey(ns, c), gather.HealKey(ns, c)}
}

// forNodeUpdate is forNode for the node informer's deliveries: an update
// that changed only the node's message and conditions
// (wake.OnlyNodeMessage) concerns the node alone, and the heal machine
// hears only of a change it reads (wake.NodeChangeConcernsHeal). A node's change of
// state, its add or its delete also wakes the other nodes of its cluster
// whose wait another node's change ends (wake.WokenByPool): a drain
// blocked for want of a place, a volume's down node come back, a node
// ahead in an upgrade batch.
func (k keyMapper) forNodeUpdate(oldObj, newObj any) []engine.Key {
	n, ok := newObj.(*operatorv1alpha1.GlusterNode)
	if ok && wake.OnlyNodeMessage(oldObj, newObj) {
		return []engine.Key{gather.NodeKey(n.Namespace, n.Name)}
	}
	keys := k.forNode(newObj)
	if !wake.NodeChangeConcernsHeal(oldObj, newObj) {
		keys = slices.DeleteFunc(keys, func(key engine.Key) bool { return key.Machine == states.HealMachine })
	}
	if !ok || !wake.NodeStateChanged(oldObj, newObj) {
		return keys
	}
	siblings, _ := k.nodes.GlusterNodes(n.Namespace).List(labels.Everything())
	for _, s := range siblings {
		if s.Name != n.Name && s.Spec.Cluster == n.Spec.Cluster && wake.WokenByPool(s) {
			keys = append(keys, gather.NodeKey(s.Namespace, s.Name))
		}
	}
	return keys
}

// forLabelled maps a namespaced object the operator created (pods,
// StatefulSets, PVCs, Secrets, Services) through its labels: a node's
// objects to the node, shared infrastructure to the cluster.
func (k keyMapper) forLabelled(obj any) []engine.Key {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	l := m.GetLabels()
	if n := l[objects.LabelNode]; n != "" {
		return []engine.Key{gather.NodeKey(m.GetNamespace(), n)}
	}
	if c := l[objects.LabelCluster]; c != "" {
		if l[objects.LabelComponent] == objects.ComponentCSINode {
			// The upgrade machine waits for the CSI node plugin.
			return []engine.Key{gather.ClusterKey(m.GetNamespace(), c), gather.UpgradeKey(m.GetNamespace(), c)}
		}
		return []engine.Key{gather.ClusterKey(m.GetNamespace(), c)}
	}
	return nil
}

// forPV maps a cluster-scoped PersistentVolume to every GlusterCluster it
// uses (a deletion may be waiting for it).
func (k keyMapper) forPV(obj any) []engine.Key {
	pv, ok := obj.(*corev1.PersistentVolume)
	if !ok {
		return nil
	}
	cs, _ := gather.IndexedClusters(k.byUse, pv)
	var keys []engine.Key
	for _, c := range cs {
		keys = append(keys, gather.ClusterKey(c.Namespace, c.Name))
	}
	return keys
}

// forClusterScoped maps a cluster-scoped object anthill made for a cluster
// (CSIDriver, ClusterRole, ClusterRoleBinding) through its cluster and
// cluster-namespace labels: it has no namespace and no owner reference.
func (k keyMapper) forClusterScoped(obj any) []engine.Key {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	l := m.GetLabels()
	if l[objects.LabelCluster] == "" || l[objects.LabelClusterNamespace] == "" {
		return nil
	}
	return []engine.Key{gather.ClusterKey(l[objects.LabelClusterNamespace], l[objects.LabelCluster])}
}

// forStorageClass maps a StorageClass to the cluster it belongs to by its
// labels, like forClusterScoped, and to every cluster that wants its name:
// for those it is a clash, and its deletion lets them create their own.
func (k keyMapper) forStorageClass(obj any) []engine.Key {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	keys := k.forClusterScoped(obj)
	cs, _ := k.clusters.List(labels.Everything())
	for _, c := range cs {
		key := gather.ClusterKey(c.Namespace, c.Name)
		for _, sc := range objects.DesiredStorageClasses(c) {
			if sc.Name == m.GetName() && !slices.Contains(keys, key) {
				keys = append(keys, key)
			}
		}
	}
	return keys
}
