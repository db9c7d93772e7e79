package states

import "slices"

// PeersSharingSets returns the ids of the peers, other than peer, that hold
// a brick of some subvolume of vols that also has a brick on peer: the
// peers whose stop, together with peer's, could take two bricks of one
// replica set down.
func PeersSharingSets(peer string, vols []VolumeFacts) map[string]bool {
	out := map[string]bool{}
	for _, v := range vols {
		for _, s := range v.Subvols {
			if !slices.ContainsFunc(s.Bricks, func(b BrickFacts) bool { return b.PeerID == peer }) {
				continue
			}
			for _, b := range s.Bricks {
				if b.PeerID != peer {
					out[b.PeerID] = true
				}
			}
		}
	}
	return out
}

// BatchMember is what the node machine knows, from the listers, about
// another member of the upgrade batch.
type BatchMember struct {
	Name, PeerID string
	// Done: the node is back Online at the target version.
	Done bool
}

// UpgradeTurnsAhead returns the members of the upgrade batch (in the
// upgrade machine's order) that come before self, share a replica set
// with it (sharing, by peer id) and are not done. A batch member stops
// only once this is empty.
//
// GD2's view cannot order the stops of two members by itself: a member
// that has just committed to Restarting still shows its bricks online
// until its pod is gone, and two members deciding at the same time each
// see the other online. The batch is one object both read, so
// "the earlier one first" is decided the same way by both, and the
// later one waits until the earlier one has come back and healed.
func UpgradeTurnsAhead(self string, batch []BatchMember, sharing map[string]bool) []string {
	var out []string
	for _, m := range batch {
		if m.Name == self {
			return out
		}
		if !m.Done && m.PeerID != "" && sharing[m.PeerID] {
			out = append(out, m.Name)
		}
	}
	// self is not in the batch: it is not selected, and waits for nobody.
	return nil
}
