package node

import (
	"context"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/gluster/anthill/fsm"
	"github.com/gluster/anthill/gd2"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/states"
)

// How a node joins GD2's pool. Before it joins, a node's pod is one of the
// management Service's endpoints (from the moment it is ready) and its GD2
// a pool of its own. Real GD2 (not the simulator, whose Service reaches
// members only) showed what adds sent through the Service do when several
// pods start at once: each served by whichever pod the Service picked, one
// peer was added to a pool that then joined another, and stayed alone in
// the first, which the operator took for joined and waited for ever to see
// alive. So while no node of the cluster has joined, only the first by
// name joins (through the Service: wherever the add lands, that pool
// becomes the cluster's) and the others wait for it
// (states.NodeSnapshot.JoinAfter); after that, each joins through the GD2
// of a node that joined.

// joinVia is the client a node's peer add goes through: the GD2 of the
// node poolEntry names, else the cluster's.
func (s *Syncer) joinVia(ctx context.Context, cluster *operatorv1alpha1.GlusterCluster, node *operatorv1alpha1.GlusterNode) (*gd2.Client, error) {
	list, err := s.Nodes.GlusterNodes(node.Namespace).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	if via, _ := poolEntry(list, cluster.Name, node.Name); via != "" {
		for _, n := range list {
			if n.Name == via {
				return s.GD2.ForNode(ctx, cluster, n)
			}
		}
	}
	return s.GD2.For(ctx, cluster)
}

// joinAfter sets snap.JoinAfter of a Provisioning node: the node of its
// cluster that must join before it (poolEntry), "" when none.
func (s *Syncer) joinAfter(node *operatorv1alpha1.GlusterNode, snap *states.NodeSnapshot) error {
	if snap.State != states.NodeProvisioning {
		return nil
	}
	list, err := s.Nodes.GlusterNodes(node.Namespace).List(labels.Everything())
	if err != nil {
		return err
	}
	_, snap.JoinAfter = poolEntry(list, node.Spec.Cluster, node.Name)
	return nil
}

// poolEntry says how the node self of cluster joins the pool. While no
// node of the cluster (being deleted ones aside) has a peer, the first by
// name joins and every other waits for it (after), chosen among all the
// cluster's nodes, not those whose pod is ready, so that syncs that see
// the pods at different moments choose the same one. Once one has a peer,
// self's add goes through the GD2 of another node that joined and is in
// the pool (via): Online first, then in maintenance or upgrading, then
// joining, each by name; "" (the cluster's client) when every node that
// joined may have left the pool (offline, failed, leaving).
func poolEntry(nodes []*operatorv1alpha1.GlusterNode, cluster, self string) (via, after string) {
	var mine []*operatorv1alpha1.GlusterNode
	joined := false
	for _, n := range nodes {
		if n.Spec.Cluster != cluster || n.DeletionTimestamp != nil {
			continue
		}
		mine = append(mine, n)
		joined = joined || n.Status.PeerID != ""
	}
	if !joined {
		first := self
		for _, n := range mine {
			if n.Name < first {
				first = n.Name
			}
		}
		if first == self {
			return "", ""
		}
		return "", first
	}
	return poolMember(mine, self), ""
}

// poolMember names a node of nodes other than self that joined and is in
// the pool, by its state (a node of a cluster being deleted still is until
// its own turn): Online first, then in maintenance or upgrading, then joining
// with its peer added, each by name; "" when there is none (every node
// that joined may have left the pool: offline, failed, leaving).
func poolMember(nodes []*operatorv1alpha1.GlusterNode, self string) string {
	rank := func(n *operatorv1alpha1.GlusterNode) int {
		switch states.NodeMeaning(fsm.State(n.Status.State)).Class {
		case states.NodeClassOnline:
			return 0
		case states.NodeClassMaintenance, states.NodeClassUpgrading:
			return 1
		case states.NodeClassJoining:
			return 2
		}
		return -1
	}
	var members []*operatorv1alpha1.GlusterNode
	for _, n := range nodes {
		if n.Name != self && n.Status.PeerID != "" && rank(n) >= 0 {
			members = append(members, n)
		}
	}
	if len(members) == 0 {
		return ""
	}
	slices.SortFunc(members, func(a, b *operatorv1alpha1.GlusterNode) int {
		if d := rank(a) - rank(b); d != 0 {
			return d
		}
		return strings.Compare(a.Name, b.Name)
	})
	return members[0].Name
}

// deleteVia is the client a leaving node's peer delete goes through: the
// GD2 of another node of the pool (poolMember), else the cluster's. GD2
// refuses to delete the peer that serves the request, and taking the
// node's pod out of the management Service does not move a connection
// already open to it: the operator's kept-alive connection through the
// Service's address stays with the pod it reached, so on the real node a
// cluster's deletion retried "removing self is disallowed" on the same pod
// for minutes.
func (s *Syncer) deleteVia(ctx context.Context, cluster *operatorv1alpha1.GlusterCluster, node *operatorv1alpha1.GlusterNode) (*gd2.Client, error) {
	list, err := s.Nodes.GlusterNodes(node.Namespace).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	var mine []*operatorv1alpha1.GlusterNode
	for _, n := range list {
		if n.Spec.Cluster == cluster.Name {
			mine = append(mine, n)
		}
	}
	if name := poolMember(mine, node.Name); name != "" {
		for _, n := range mine {
			if n.Name == name {
				return s.GD2.ForNode(ctx, cluster, n)
			}
		}
	}
	return s.GD2.For(ctx, cluster)
}
