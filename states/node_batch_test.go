package states

import (
	"maps"
	"slices"
	"testing"
)

func TestPeersSharingSets(t *testing.T) {
	set := func(name string, peers ...string) SubvolFacts {
		s := SubvolFacts{Name: name, Replica: true}
		for _, p := range peers {
			s.Bricks = append(s.Bricks, BrickFacts{PeerID: p, Online: true})
		}
		return s
	}
	vols := []VolumeFacts{
		{Name: "a", Started: true, Subvols: []SubvolFacts{set("a-0", "p1", "p2", "p3"), set("a-1", "p4", "p5", "p6")}},
		{Name: "b", Started: true, Subvols: []SubvolFacts{set("b-0", "p1", "p5", "p7")}},
	}
	tests := []struct {
		name, peer string
		want       []string
	}{
		{name: "the other bricks of every set with a brick on the peer", peer: "p1", want: []string{"p2", "p3", "p5", "p7"}},
		{name: "only the sets of the peer, across volumes", peer: "p5", want: []string{"p1", "p4", "p6", "p7"}},
		{name: "a peer without bricks shares nothing", peer: "p9"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := slices.Sorted(maps.Keys(PeersSharingSets(tc.peer, vols)))
			if !slices.Equal(got, tc.want) {
				t.Errorf("PeersSharingSets(%s) = %v, want %v", tc.peer, got, tc.want)
			}
		})
	}
}

func TestUpgradeTurnsAhead(t *testing.T) {
	batch := []BatchMember{
		{Name: "z1-a", PeerID: "pa"},
		{Name: "z1-b", PeerID: "pb"},
		{Name: "z2-a", PeerID: "pc", Done: true},
		{Name: "self"},
		{Name: "z3-a", PeerID: "pd"},
	}
	tests := []struct {
		name    string
		self    string
		sharing map[string]bool
		want    []string
	}{
		{name: "earlier members sharing a set that are not done go first", self: "self", sharing: map[string]bool{"pa": true, "pb": true}, want: []string{"z1-a", "z1-b"}},
		{name: "an earlier member that shares no set does not hold the node", self: "self", sharing: map[string]bool{"pb": true}, want: []string{"z1-b"}},
		{name: "an earlier member that is done does not hold the node", self: "self", sharing: map[string]bool{"pc": true}},
		{name: "a later member never holds the node, so one of any two goes first", self: "self", sharing: map[string]bool{"pd": true}},
		{name: "the first member waits for nobody", self: "z1-a", sharing: map[string]bool{"pb": true, "pd": true}},
		{name: "a node not in the batch waits for nobody", self: "other", sharing: map[string]bool{"pa": true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := UpgradeTurnsAhead(tc.self, batch, tc.sharing); !slices.Equal(got, tc.want) {
				t.Errorf("UpgradeTurnsAhead(%s) = %v, want %v", tc.self, got, tc.want)
			}
		})
	}
}
