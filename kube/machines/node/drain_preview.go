package node

import (
	"context"
	"fmt"

	"github.com/gluster/anthill/gd2"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/effects"
	"github.com/gluster/anthill/kube/machines/gather"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
	"github.com/gluster/anthill/transitions"
)

// BrickPreview is one brick of a node about to be drained and what the
// operator's placement policy (states.AnalyzePeer, states.PlanMoves) would
// do with it now.
type BrickPreview struct {
	Volume, Path string
	// Targets are the peers PlanMove offers now, best first, and
	// TargetNodes the GlusterNodes ("namespace/name") holding them, where
	// known; SameZone says the best stays in the brick's zone.
	Targets, TargetNodes []string
	SameZone             bool
	// Blocked says why the brick cannot move now (empty when it can).
	Blocked string
}

// DrainPreview is what draining a node would do, as far as its state now
// tells: the operator moves one brick at a time and plans each move again
// after the previous one has healed, so later targets may differ as
// devices fill and heals finish.
type DrainPreview struct {
	// PeerID is the node's GD2 peer; empty when GD2 does not know it
	// (then there are no bricks to move).
	PeerID string
	// Bricks are the node's bricks the policy would move now, in the
	// order it would move them.
	Bricks []BrickPreview
	// Staying counts the node's bricks that may not move yet: the only
	// healed copy of their data, or a replica set that would lose quorum.
	Staying int
	// PeerBricks counts every peer's bricks, from the same volume list:
	// what the scale-down order (objects.ScaleDownOrder) goes by.
	PeerBricks objects.BrickCounts
}

// PreviewDrain computes the DrainPreview of node with the same facts and
// the same pure policies its sync uses. nodes are the GlusterNodes of the
// node's namespace.
func PreviewDrain(ctx context.Context, gc effects.GD2Reader, node *operatorv1alpha1.GlusterNode, nodes []*operatorv1alpha1.GlusterNode) (DrainPreview, error) {
	var out DrainPreview
	peers, err := gc.ListPeers(ctx, gd2.Filter{})
	if err != nil {
		return out, fmt.Errorf("list peers: %w", err)
	}
	key := node.Namespace + "/" + node.Name
	var peer *gd2.Peer
	nodeOf := map[string]string{}
	for i := range peers {
		p := &peers[i]
		nodeOf[p.ID] = p.Metadata[transitions.MetaNode]
		if p.Metadata[transitions.MetaNode] == key || (node.Status.PeerID != "" && p.ID == node.Status.PeerID) {
			peer = p
		}
	}
	vols, err := gc.ListVolumes(ctx, gd2.Filter{})
	if err != nil {
		return out, fmt.Errorf("list volumes: %w", err)
	}
	out.PeerBricks = objects.CountBricks(vols)
	if peer == nil {
		return out, nil
	}
	out.PeerID = peer.ID
	devices, err := gc.ListAllDevices(ctx)
	if err != nil {
		return out, fmt.Errorf("list devices: %w", err)
	}
	moved := movedRefs(node)
	views, err := peerVolumeFacts(ctx, gc, vols, peer.ID, moved)
	if err != nil {
		return out, err
	}
	a := states.AnalyzePeer(peer.ID, views, moved)
	out.Staying = a.OnPeer - len(a.Movable)
	moves := states.PlanMoves(states.DrainFacts{
		Source: peer.ID, Movable: a.Movable, Volumes: views,
		Peers: gather.PeerFacts(peers), Devices: gather.DeviceFacts(devices),
		FormerHolders: formerHoldersAmong(node.Spec.Cluster, nodes), Refused: node.Status.RefusedPeers,
	})
	for _, m := range moves {
		bp := BrickPreview{Volume: m.Brick.Volume, Path: m.Brick.Path}
		if m.Block != nil {
			bp.Blocked = m.Block.Reason
		} else {
			bp.Targets, bp.SameZone = m.Plan.Targets, m.Plan.SameZone
			for _, t := range m.Plan.Targets {
				bp.TargetNodes = append(bp.TargetNodes, nodeOf[t])
			}
		}
		out.Bricks = append(out.Bricks, bp)
	}
	return out, nil
}

// peerVolumeFacts reads the facts of every volume of vols that concerns
// peer (a brick on it, or one moved off it: volumeConcerns), in vols'
// order: the node machine's gather and the drain preview read them so.
func peerVolumeFacts(ctx context.Context, gc effects.GD2Reader, vols []gd2.Volume, peer string, moved []states.BrickRef) ([]states.VolumeFacts, error) {
	var views []states.VolumeFacts
	for _, v := range vols {
		if !volumeConcerns(v, peer, moved) {
			continue
		}
		vv, err := gather.ReadVolume(ctx, gc, v)
		if err != nil {
			return nil, err
		}
		views = append(views, vv)
	}
	return views, nil
}
