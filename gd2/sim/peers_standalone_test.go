package sim

import (
	"strings"
	"testing"
)

// loneList reads the peer list a host answers on its own address and
// checks it is that host alone, under the id its headers report.
func (h *harness) loneList(host string) wirePeer {
	h.t.Helper()
	var ps []wirePeer
	r := h.mustAt(host, 200, "GET", "/v1/peers", nil)
	r.decode(h.t, &ps)
	if len(ps) != 1 {
		h.t.Fatalf("%s lists %d peers, want itself alone: %s", host, len(ps), r.body)
	}
	p := ps[0]
	if p.Name != host || !p.Online || p.PID == 0 || p.Metadata["_zone"] != p.ID {
		h.t.Fatalf("%s lists %+v, want itself online with its own zone", host, p)
	}
	if got := r.header.Get("X-Gluster-Peer-Id"); got != p.ID {
		h.t.Fatalf("%s serves as %s but lists %s", host, got, p.ID)
	}
	return p
}

func TestStandaloneGD2AnswersItsOwnOneMemberPeerList(t *testing.T) {
	const envID = "0c000000-0000-4000-8000-00000000000c"
	tests := []struct {
		name  string
		envID string
	}{
		{"a host without GD2_PEER_ID lists itself under the id it drew", ""},
		{"a host with GD2_PEER_ID lists itself under that id", envID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, Config{Peers: 1})
			if err := h.sim.UpsertHost(HostSpec{Name: "lone", Alive: true, PeerID: tt.envID}); err != nil {
				t.Fatal(err)
			}
			p := h.loneList("lone")
			if tt.envID != "" && p.ID != tt.envID {
				t.Fatalf("lone lists itself as %s, want its GD2_PEER_ID %s", p.ID, tt.envID)
			}
			if again := h.loneList("lone"); again.ID != p.ID {
				t.Fatalf("lone changed its id between two reads: %s then %s", p.ID, again.ID)
			}
			var got wirePeer
			h.mustAt("lone", 200, "GET", "/v1/peers/"+p.ID, nil).decode(t, &got)
			if got.ID != p.ID {
				t.Fatalf("GET of its own peer: %+v", got)
			}
			h.mustAt("lone", 404, "GET", "/v1/peers/"+h.peerOfHost("gd2-1"), nil)
			if r := h.doAt("lone", "GET", "/v1/peers?key=nope", nil); r.status != 200 || strings.TrimSpace(string(r.body)) != "null" {
				t.Fatalf("filter matching nothing: %d %s", r.status, r.body)
			}
			// The rest of a lone store is not modelled.
			h.mustAt("lone", 503, "GET", "/v1/volumes", nil)
			// Joining makes it a member: the cluster's list from then on.
			var joined wirePeer
			h.mustAt("gd2-1", 201, "POST", "/v1/peers", wirePeerAddReq{Addresses: []string{"lone"}}).decode(t, &joined)
			if tt.envID != "" && joined.ID != tt.envID {
				t.Fatalf("joined as %s, want %s", joined.ID, tt.envID)
			}
			var members []wirePeer
			h.mustAt("lone", 200, "GET", "/v1/peers", nil).decode(t, &members)
			if len(members) != 2 {
				t.Fatalf("a member lists %d peers, want 2", len(members))
			}
		})
	}
}

func TestDeletedPeerAnswersItsOwnPeerListUnderAFreshID(t *testing.T) {
	h := newHarness(t, Config{Peers: 2})
	gone := h.peerOfHost("gd2-2")
	h.mustAt("gd2-1", 204, "DELETE", "/v1/peers/"+gone, nil)
	p := h.loneList("gd2-2")
	if p.ID == gone {
		t.Fatalf("the removed node kept its member id %s", gone)
	}
	// The cluster no longer lists it.
	for _, q := range h.peers() {
		if q.Name == "gd2-2" {
			t.Fatalf("cluster still lists the removed node: %+v", q)
		}
	}
}
