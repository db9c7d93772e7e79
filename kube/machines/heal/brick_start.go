package heal

import (
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/gluster/anthill/fsm"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/states"
)

// clusterNodes are c's GlusterNodes from the cache, by GD2 peer id (nodes
// without a peer yet hold no bricks and are left out).
func (s *Syncer) clusterNodes(c *operatorv1alpha1.GlusterCluster) map[string]*operatorv1alpha1.GlusterNode {
	if s.Nodes == nil {
		return nil
	}
	list, err := s.Nodes.GlusterNodes(c.Namespace).List(labels.Everything())
	if err != nil {
		return nil
	}
	out := map[string]*operatorv1alpha1.GlusterNode{}
	for _, n := range list {
		if n.Spec.Cluster == c.Name && n.Status.PeerID != "" {
			out[n.Status.PeerID] = n
		}
	}
	return out
}

// bricksNotStarted reads, from one volume's bricks status and the
// cluster's peers and nodes, which bricks GD2 left offline on a live peer
// (Since and Grace are the caller's): a brick bricks-status reports not
// online whose peer GD2 lists alive. It also counts the volume's peers
// that are not alive and names a node of the volume that anthill is
// changing. A volume not read this sync has none.
func bricksNotStarted(r healReading, hs *healSync) states.BricksNotStarted {
	var out states.BricksNotStarted
	if !r.ok || !r.bricksRead || hs == nil {
		return out
	}
	var offline []offlinePeer
	down := map[string]bool{}
	for _, b := range r.vol.Bricks() {
		p, known := hs.peers[b.PeerID]
		if (!known || !p.Online) && !down[b.PeerID] {
			down[b.PeerID] = true
			out.PeersDown++
		}
		if n := hs.nodes[b.PeerID]; n != nil && out.Changing == "" && states.ChangesBricks(fsm.State(n.Status.State)) {
			out.Changing = "node " + n.Name + " is " + n.Status.State
		}
	}
	for _, b := range r.bricksStatus {
		p, known := hs.peers[b.Info.PeerID]
		if b.Online || !known || !p.Online {
			continue
		}
		out.Count++
		if !slices.ContainsFunc(offline, func(o offlinePeer) bool { return o.peer == b.Info.PeerID }) {
			o := offlinePeer{peer: b.Info.PeerID}
			if n := hs.nodes[b.Info.PeerID]; n != nil {
				o.node = n.Name
			}
			offline = append(offline, o)
		}
	}
	slices.SortFunc(offline, func(a, b offlinePeer) int {
		if a.peer < b.peer {
			return -1
		}
		if a.peer > b.peer {
			return 1
		}
		return 0
	})
	for _, o := range offline {
		out.Peers, out.Nodes = append(out.Peers, o.peer), append(out.Nodes, o.node)
	}
	return out
}

// trackNotStarted returns since when bricks of volume have been left
// offline on a live peer, with nothing of the volume being changed,
// without a break; the zero time when they are not now (the window then
// starts over).
func (s *Syncer) trackNotStarted(c *operatorv1alpha1.GlusterCluster, volume string, b states.BricksNotStarted, now time.Time) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := progressKey(c, volume)
	if b.Count == 0 || b.Changing != "" {
		delete(s.notStarted, k)
		return time.Time{}
	}
	if since, ok := s.notStarted[k]; ok {
		return since
	}
	if s.notStarted == nil {
		s.notStarted = map[string]time.Time{}
	}
	s.notStarted[k] = now
	return now
}
