package gather

import (
	"slices"
	"strings"

	"github.com/gluster/anthill/gd2"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/transitions"
)

// ownPeer reports whether p is one of c's peers: tagged for c (and a node
// of c's namespace), or untagged (external mode, the founding GD2).
func ownPeer(c *operatorv1alpha1.GlusterCluster, p gd2.Peer) bool {
	node, cl := p.Metadata[transitions.MetaNode], p.Metadata[transitions.MetaCluster]
	return (cl == "" || cl == c.Name) && (node == "" || strings.HasPrefix(node, c.Namespace+"/"))
}

// OwnPeers is those of peers that are c's (ownPeer).
func OwnPeers(c *operatorv1alpha1.GlusterCluster, peers []gd2.Peer) []gd2.Peer {
	var out []gd2.Peer
	for _, p := range peers {
		if ownPeer(c, p) {
			out = append(out, p)
		}
	}
	return out
}

// OwnVolumes drops the volumes whose every brick sits on a peer anthill
// tagged for another GlusterCluster: a GD2 pool shared by several
// clusters (the e2e simulator, or an admin's mistake) must not let one
// cluster's volumes degrade another. Untagged peers (external mode, the
// founding GD2) count as the cluster's own.
func OwnVolumes(c *operatorv1alpha1.GlusterCluster, vols []gd2.Volume, peers []gd2.Peer) []gd2.Volume {
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
