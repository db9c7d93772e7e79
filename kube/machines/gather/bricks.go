package gather

import (
	"context"
	"fmt"

	"github.com/gluster/anthill/fsm"
	"github.com/gluster/anthill/gd2"
	"github.com/gluster/anthill/kube/effects"
	"github.com/gluster/anthill/states"
	"github.com/gluster/anthill/transitions"
)

// The brick data-safety rules (healed copies, quorum, which brick may move
// and where) are pure functions over facts in package states
// (states/bricks.go, states/brick_placement.go). This file only converts
// GD2's volume, brick-status, heal-info, peer and device answers into those
// facts; the gatherer (gd2Side) reads, converts and calls the rules.

// VolumeFacts merges a volume with its bricks status and heal-info
// (either may be nil: a stopped volume has neither).
func VolumeFacts(v gd2.Volume, status []gd2.BrickStatus, heal []gd2.BrickHealInfo) states.VolumeFacts {
	type key struct{ peer, path string }
	online := map[key]gd2.BrickStatus{}
	for _, s := range status {
		online[key{s.Info.PeerID, s.Info.Path}] = s
	}
	pending := map[key]gd2.BrickHealInfo{}
	for _, h := range heal {
		// name is host:/path; host-id is the peer (or "-" when unreachable).
		path := h.Name
		for i := 0; i < len(h.Name); i++ {
			if h.Name[i] == ':' {
				path = h.Name[i+1:]
				break
			}
		}
		pending[key{h.HostID, path}] = h
	}
	vf := states.VolumeFacts{Name: v.Name, Started: v.State == gd2.VolumeStarted}
	for _, sv := range v.Subvols {
		s := states.SubvolFacts{
			Name:     sv.Name,
			Replica:  sv.Type == gd2.SubvolReplicate || sv.Type == gd2.SubvolDisperse,
			Disperse: sv.Type == gd2.SubvolDisperse, Data: sv.DisperseDataCount,
		}
		for _, b := range sv.Bricks {
			k := key{b.PeerID, b.Path}
			st := online[k]
			bf := states.BrickFacts{
				Path: b.Path, PeerID: b.PeerID,
				Arbiter: b.Type == gd2.BrickTypeArbiter, Online: vf.Started && st.Online,
				Pending: -1, Size: st.Size.Capacity, Used: st.Size.Used,
			}
			if h, ok := pending[k]; ok && !h.BrickDown() {
				bf.Pending = counter(h.EntriesInHealPending, h.TotalEntries, h.Entries)
				bf.SplitBrain = max(counter(h.EntriesInSplitBrain), 0)
			} else if !s.Replica && bf.Online {
				bf.Pending = 0
			}
			s.Bricks = append(s.Bricks, bf)
		}
		vf.Subvols = append(vf.Subvols, s)
	}
	return vf
}

// counter returns the first present counter, or -1.
func counter(cs ...*int64) int64 {
	for _, c := range cs {
		if c != nil {
			return *c
		}
	}
	return -1
}

// PeerFacts converts GD2 peers. A peer a drain moved to its draining zone
// gets the zone recorded under effects.PeerMetaZone as its home zone (the planner
// compares physical zones); whether it may receive bricks follows the node
// state mirrored into its metadata.
func PeerFacts(peers []gd2.Peer) []states.PeerFacts {
	out := make([]states.PeerFacts, 0, len(peers))
	for _, p := range peers {
		pf := states.PeerFacts{
			ID: p.ID, Label: peerLabel(p), Zone: p.Zone(), Online: p.Online,
			MayReceive: states.NodeStateMayReceiveBricks(fsm.State(p.Metadata[transitions.MetaState])),
		}
		if orig := p.Metadata[effects.PeerMetaZone]; orig != "" && p.Zone() == transitions.DrainingZone(orig) {
			pf.HomeZone = orig
		}
		out = append(out, pf)
	}
	return out
}

// peerLabel names a peer for a person: its GlusterNode, else its name.
func peerLabel(p gd2.Peer) string {
	if n := p.Metadata[transitions.MetaNode]; n != "" {
		return fmt.Sprintf("%s (peer %s)", n, p.ID)
	}
	if p.Name != "" {
		return fmt.Sprintf("%s (peer %s)", p.Name, p.ID)
	}
	return "peer " + p.ID
}

// DeviceFacts converts GD2 devices.
func DeviceFacts(devices []gd2.Device) []states.DeviceFacts {
	out := make([]states.DeviceFacts, 0, len(devices))
	for _, d := range devices {
		out = append(out, states.DeviceFacts{PeerID: d.PeerID, Enabled: d.State == gd2.DeviceEnabled, Free: d.FreeSize})
	}
	return out
}

// ReadVolume reads brick status and heal-info of a started volume.
func ReadVolume(ctx context.Context, gc effects.GD2Reader, v gd2.Volume) (states.VolumeFacts, error) {
	if v.State != gd2.VolumeStarted {
		return VolumeFacts(v, nil, nil), nil
	}
	st, err := gc.BricksStatus(ctx, v.Name)
	if err != nil {
		return states.VolumeFacts{}, fmt.Errorf("bricks status of %s: %w", v.Name, err)
	}
	var heal []gd2.BrickHealInfo
	if Redundant(v) {
		heal, err = gc.HealInfo(ctx, v.Name, gd2.HealInfoSummary)
		if err != nil {
			return states.VolumeFacts{}, fmt.Errorf("heal info of %s: %w", v.Name, err)
		}
	}
	return VolumeFacts(v, st, heal), nil
}

// Redundant reports whether v holds copies (a replicate or disperse
// subvolume), so heal-info means something for it.
func Redundant(v gd2.Volume) bool {
	for _, sv := range v.Subvols {
		if sv.Type == gd2.SubvolReplicate || sv.Type == gd2.SubvolDisperse {
			return true
		}
	}
	return false
}
