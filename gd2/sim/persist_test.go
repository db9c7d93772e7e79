package sim

import (
	"path/filepath"
	"testing"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestPersistenceRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	fc := clocktesting.NewFakeClock(epoch)
	s1, err := New(Config{Peers: 3, Zones: 3, StatePath: path, Clock: fc, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, sim: s1, clock: fc}
	h.srv = newServer(t, s1)
	h.registerAll()
	h.must(201, "POST", "/v1/volumes", wireVolCreateReq{Name: "v", Size: 1 << 30, Replica: 3, Metadata: map[string]string{"pvc": "x"}})
	h.must(200, "POST", "/v1/volumes/v/start", nil)
	want := h.volume("v")
	peersBefore := h.peers()
	if err := s1.Close(); err != nil {
		t.Fatal(err)
	}

	// Peers/Zones are ignored once a state file exists.
	s2, err := New(Config{Peers: 1, StatePath: path, Clock: fc})
	if err != nil {
		t.Fatal(err)
	}
	h2 := &harness{t: t, sim: s2, clock: fc, srv: newServer(t, s2)}
	got := h2.volume("v")
	if got.ID != want.ID || got.State != "Started" || got.Metadata["pvc"] != "x" || len(got.Subvols[0].Bricks) != 3 {
		t.Errorf("restored volume %+v", got)
	}
	if ps := h2.peers(); len(ps) != len(peersBefore) || ps[0].ID != peersBefore[0].ID {
		t.Errorf("restored peers %+v", ps)
	}
	if s2.ClusterID() != s1.ClusterID() {
		t.Errorf("cluster id changed")
	}
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
}
