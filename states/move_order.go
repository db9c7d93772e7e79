package states

import (
	"slices"

	"github.com/gluster/anthill/fsm"
)

// A drain moves one brick per sync. Which one, and which peers it may go
// to, is decided here from what the gatherer read in that sync: AnalyzePeer
// says which bricks may move at all, PlanMove where one of them may go,
// NextMove which goes first, and NextMoves which may go beside the moves
// already in flight (drainPolicy.maxParallelMoves).

// DrainFacts is what a drain knows when it picks its next move.
type DrainFacts struct {
	// Source is the draining node's peer.
	Source string
	// Movable are the source's bricks that may move now, in AnalyzePeer's
	// order (by volume, then path).
	Movable []VolumeBrick
	// Volumes are the volumes the node's bricks (and the bricks it moved)
	// belong to, in the order GD2 listed them.
	Volumes []VolumeFacts
	// Peers and Devices are GD2's peers and devices.
	Peers   []PeerFacts
	Devices []DeviceFacts
	// FormerHolders maps each brick moved off a node of the cluster to the
	// peers that held it (see ClashPeers).
	FormerHolders map[BrickRef][]string
	// Refused are the peers a brick move off this node failed on after GD2
	// had begun preparing the new brick there (the node's refusedPeers,
	// see RefuseAfterFailure).
	Refused []string
	// InFlight counts the drain's moves whose replacement is still healing
	// (AnalyzePeer's Unhealed): what NextMoves counts against its bound.
	InFlight int
}

// BrickMove is one movable brick with the plan of its move: where it may
// go, or why it cannot move now (Block).
type BrickMove struct {
	Brick VolumeBrick
	Plan  MovePlan
	Block *MoveBlock
}

// DrainMove is the drain's next step as NextMove chose it.
type DrainMove struct {
	// Found: Move is the brick to move now, and where it may go.
	Found bool
	Move  BrickMove
	// Blocked says why no brick can move now, "" when one can or none is
	// movable.
	Blocked string
	// NodeDown names the down nodes of the first of the node's volumes that
	// has one (VolumeNodesDown), "" when none has: what an admin can act
	// on, and perhaps why the node's copies are short, so it is named
	// whether or not some other brick can move.
	NodeDown string
}

// planBrick plans the move of b, one of f.Movable.
func (f DrainFacts) planBrick(b VolumeBrick, refused map[string]bool) BrickMove {
	var vol VolumeFacts
	for _, v := range f.Volumes {
		if v.Name == b.Volume {
			vol = v
			break
		}
	}
	plan, block := PlanMove(b, vol, f.Source, f.Peers, f.Devices, ClashPeers(vol, b.Path, f.FormerHolders), refused)
	return BrickMove{Brick: b, Plan: plan, Block: block}
}

func (f DrainFacts) refusedSet() map[string]bool {
	out := make(map[string]bool, len(f.Refused))
	for _, id := range f.Refused {
		out[id] = true
	}
	return out
}

// PlanMoves plans the move of every movable brick, in f.Movable's order:
// the drain preview, which shows each brick's plan.
func PlanMoves(f DrainFacts) []BrickMove {
	refused := f.refusedSet()
	out := make([]BrickMove, 0, len(f.Movable))
	for _, b := range f.Movable {
		out = append(out, f.planBrick(b, refused))
	}
	return out
}

// NextMove picks the brick a drain moves now: the first movable brick, in
// AnalyzePeer's order, that has a place to go. A brick that cannot move
// now does not hold up the ones after it. When none can move, Blocked is
// the first block that waits for a down node (it ends by itself when the
// node is back, and names what an admin can act on), else the first block.
func NextMove(f DrainFacts) DrainMove {
	var out DrainMove
	byID := make(map[string]PeerFacts, len(f.Peers))
	for _, p := range f.Peers {
		byID[p.ID] = p
	}
	for _, v := range f.Volumes {
		if down := VolumeNodesDown(v, byID); down != "" {
			out.NodeDown = down
			break
		}
	}
	refused := f.refusedSet()
	var block *MoveBlock
	for _, b := range f.Movable {
		m := f.planBrick(b, refused)
		if m.Block != nil {
			if block == nil || (m.Block.NodeDown && !block.NodeDown) {
				block = m.Block
			}
			continue
		}
		out.Found, out.Move = true, m
		return out
	}
	if block != nil {
		out.Blocked = block.Reason
	}
	return out
}

// NextMoves plans the moves a drain may start now beside the f.InFlight
// moves whose replacements still heal, at most limit in flight in all
// (drainPolicy.maxParallelMoves; below 1 counts as 1). The first move,
// when none is in flight, is NextMove's. Every further one keeps the
// sequential rules on the state the earlier ones leave, and:
//
//   - its replica set is fully healed (SubvolFacts.Healthy): a set holding
//     a replacement still healing, or anything else unhealed, takes no
//     move beside others, so no set ever has two moves under way;
//   - no two moves of the plan are in one replica set;
//   - it is planned after the earlier moves of the plan are charged to the
//     devices: each move's ReplacementRoom is taken from every enabled
//     device of every peer it may land on, since GD2 picks the device.
//
// Moves in different replica sets do not touch each other's zones (zone
// safety is per set, PlanMove) nor each other's replacement names (GD2
// names a replacement after its volume, set and position), so planning
// them in turn keeps both. The order is f.Movable's, as NextMove's.
func NextMoves(f DrainFacts, limit int) []BrickMove {
	room := max(limit, 1) - f.InFlight
	if room <= 0 {
		return nil
	}
	refused := f.refusedSet()
	plan := f
	plan.Devices = slices.Clone(f.Devices)
	taken := map[[2]string]bool{}
	var out []BrickMove
	for _, b := range f.Movable {
		if len(out) == room {
			break
		}
		set := [2]string{b.Volume, b.Subvol}
		if taken[set] {
			continue
		}
		if beside := f.InFlight > 0 || len(out) > 0; beside && !f.setHealthy(b) {
			continue
		}
		m := plan.planBrick(b, refused)
		if m.Block != nil {
			continue
		}
		taken[set] = true
		out = append(out, m)
		chargeDevices(plan.Devices, m.Plan.Targets, ReplacementRoom(b.Size))
	}
	return out
}

// setHealthy reports whether the replica set of b is fully healed.
func (f DrainFacts) setHealthy(b VolumeBrick) bool {
	for _, v := range f.Volumes {
		if v.Name != b.Volume {
			continue
		}
		for _, s := range v.Subvols {
			if s.Name == b.Subvol {
				return s.Healthy()
			}
		}
	}
	return false
}

// chargeDevices takes room from every enabled device of the peers in
// targets (down to zero).
func chargeDevices(devices []DeviceFacts, targets []string, room uint64) {
	for i := range devices {
		d := &devices[i]
		if d.Enabled && slices.Contains(targets, d.PeerID) {
			d.Free -= min(d.Free, room)
		}
	}
}

// RefuseAfterFailure is the node's refused peers after its step failed:
// when the step was a brick move, every peer GD2 had begun preparing the
// new brick on (preparedOn) is added, once. GD2 leaves an unusable brick
// behind on such a peer's device, so the drain never offers that peer
// again (DrainFacts.Refused); the list is cleared when the node is Online
// (CursorRefusedPeers). A failure of any other step refuses no peer.
// refused is not modified.
func RefuseAfterFailure(refused []string, step fsm.Step, preparedOn []string) []string {
	out := slices.Clip(refused)
	if step != NodeMoveBrick {
		return out
	}
	for _, id := range preparedOn {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}
