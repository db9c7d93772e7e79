package effects

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gluster/anthill/gd2"
	"github.com/gluster/anthill/gd2/sim"
	"github.com/gluster/anthill/kube/internal/fixtures"
	"github.com/gluster/anthill/transitions"
)

const (
	fxGD2Secret = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	fxGiB       = uint64(1) << 30
)

type fxGD2 struct {
	sim *sim.Simulator
	srv *httptest.Server
	c   *gd2.Client
	ops *GD2
}

// nodeClient is a client of one simulated host's own GD2, addressed by its
// name as ForNode addresses a pod.
func (f *fxGD2) nodeClient(t *testing.T, host string) *gd2.Client {
	t.Helper()
	c, err := gd2.New(gd2.Options{Endpoint: "http://" + host + ".gc-nodes.storage.svc:24007", Secret: fxGD2Secret,
		DialAddress: strings.TrimPrefix(f.srv.URL, "http://"),
		Retry:       &gd2.RetryPolicy{MaxAttempts: 1}, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// hostOf is the simulated host behind a member peer.
func (f *fxGD2) hostOf(t *testing.T, peerID string) string {
	t.Helper()
	for _, h := range f.sim.Hosts() {
		if h.PeerID == peerID {
			return h.Name
		}
	}
	t.Fatalf("no host has peer %s", peerID)
	return ""
}

func newFxGD2(t *testing.T, cfg sim.Config) *fxGD2 {
	t.Helper()
	cfg.Secret = fxGD2Secret
	s, err := sim.New(cfg)
	if err != nil {
		t.Fatalf("sim.New: %v", err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		srv.Close()
		_ = s.Close()
	})
	c, err := gd2.New(gd2.Options{Endpoint: srv.URL, Secret: fxGD2Secret,
		Retry: &gd2.RetryPolicy{MaxAttempts: 1}, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return &fxGD2{sim: s, srv: srv, c: c, ops: &GD2{Client: c}}
}

func fxNodeMeta(key string) map[string]string {
	return map[string]string{transitions.MetaNode: key, transitions.MetaCluster: "gc", transitions.MetaState: "Joining"}
}

func TestGD2OpsAddPeerTwiceReturnsTheSameID(t *testing.T) {
	f := newFxGD2(t, sim.Config{Peers: 1, DevicesPerPeer: 2, DeviceSize: 100 * fxGiB})
	addr := "gc-z1-aaaaa-0.gc-nodes.storage.svc:24008"
	id1, err := f.ops.AddPeer(fixtures.Ctx, addr, "zone-1", fxNodeMeta("storage/gc-z1-aaaaa"))
	fixtures.Must(t, err, "first add")
	id2, err := f.ops.AddPeer(fixtures.Ctx, addr, "zone-1", fxNodeMeta("storage/gc-z1-aaaaa"))
	fixtures.Must(t, err, "repeated add")
	if id1 == "" || id1 != id2 {
		t.Fatalf("ids %q and %q: a repeated join must return the first peer", id1, id2)
	}
	peers, err := f.c.ListPeers(fixtures.Ctx, gd2.Filter{})
	fixtures.Must(t, err, "list")
	if len(peers) != 2 {
		t.Fatalf("%d peers, want the pre-existing one and the added one", len(peers))
	}
	p, err := f.c.GetPeer(fixtures.Ctx, id1)
	fixtures.Must(t, err, "get")
	if p.Zone() != "zone-1" || p.Metadata[transitions.MetaNode] != "storage/gc-z1-aaaaa" {
		t.Errorf("peer metadata %v", p.Metadata)
	}
}

func TestGD2OpsAddPeerAdoptsAMemberWithoutMetadata(t *testing.T) {
	// The pre-created peer stands for the first pod, which the management
	// Service reached and which formed the pool with itself.
	f := newFxGD2(t, sim.Config{Peers: 1})
	peers, err := f.c.ListPeers(fixtures.Ctx, gd2.Filter{})
	fixtures.Must(t, err, "list")
	first := peers[0]

	id, err := f.ops.AddPeer(fixtures.Ctx, first.PeerAddresses[0], "zone-1", fxNodeMeta("storage/first"))
	fixtures.Must(t, err, "add the bootstrap member")
	if id != first.ID {
		t.Fatalf("adopted id %q, want the member's %q", id, first.ID)
	}
	p, err := f.c.GetPeer(fixtures.Ctx, id)
	fixtures.Must(t, err, "get")
	if p.Zone() != "zone-1" || p.Metadata[transitions.MetaNode] != "storage/first" {
		t.Errorf("adopted peer not tagged: %v", p.Metadata)
	}

	if _, err := f.ops.AddPeer(fixtures.Ctx, first.PeerAddresses[0], "zone-1", fxNodeMeta("storage/someone-else")); err == nil {
		t.Error("a peer tagged for one node was adopted by another")
	}
}

func TestGD2OpsDevicesAreIdempotent(t *testing.T) {
	f := newFxGD2(t, sim.Config{Peers: 1, DevicesPerPeer: 2, DeviceSize: 100 * fxGiB})
	id, err := f.ops.AddPeer(fixtures.Ctx, "n1-0.gc-nodes.storage.svc:24008", "zone-1", fxNodeMeta("storage/n1"))
	fixtures.Must(t, err, "add peer")
	for range 2 {
		fixtures.Must(t, f.ops.RegisterDevice(fixtures.Ctx, id, "/dev/sdb", ""), "register")
	}
	for _, enabled := range []bool{false, false, true, true} {
		fixtures.Must(t, f.ops.SetDeviceEnabled(fixtures.Ctx, id, "/dev/sdb", enabled), "set enabled")
		d, err := f.c.GetDevice(fixtures.Ctx, id, "/dev/sdb")
		fixtures.Must(t, err, "get device")
		if want := map[bool]gd2.DeviceState{true: gd2.DeviceEnabled, false: gd2.DeviceDisabled}[enabled]; d.State != want {
			t.Errorf("state %s, want %s", d.State, want)
		}
	}
	devs, err := f.c.ListDevices(fixtures.Ctx, id)
	fixtures.Must(t, err, "list devices")
	if len(devs) != 1 {
		t.Errorf("%d devices, want 1", len(devs))
	}
	if err := f.ops.RegisterDevice(fixtures.Ctx, id, "/dev/sdz", ""); err == nil {
		t.Error("registering a disk the host does not have succeeded")
	}
}

func TestGD2OpsSetPeerMetadataMerges(t *testing.T) {
	f := newFxGD2(t, sim.Config{Peers: 1})
	id, err := f.ops.AddPeer(fixtures.Ctx, "n1:24008", "zone-1", fxNodeMeta("storage/n1"))
	fixtures.Must(t, err, "add peer")
	fixtures.Must(t, f.ops.SetPeerMetadata(fixtures.Ctx, id, map[string]string{transitions.MetaState: "Online"}), "set")
	p, err := f.c.GetPeer(fixtures.Ctx, id)
	fixtures.Must(t, err, "get")
	if p.Metadata[transitions.MetaState] != "Online" || p.Metadata[transitions.MetaNode] != "storage/n1" {
		t.Errorf("metadata %v", p.Metadata)
	}
}

func TestGD2OpsDeletePeerOfAGonePeerIsSuccess(t *testing.T) {
	f := newFxGD2(t, sim.Config{Peers: 1})
	id, err := f.ops.AddPeer(fixtures.Ctx, "n1:24008", "zone-1", fxNodeMeta("storage/n1"))
	fixtures.Must(t, err, "add peer")
	// GD2 refuses to delete the node serving the request: the leaving pod
	// is taken out of the management Service first, as deletePeer does.
	fixtures.Must(t, f.sim.UpsertHost(sim.HostSpec{Name: "n1", Alive: true, Unserving: true}), "leave the management Service")
	fixtures.Must(t, f.ops.DeletePeer(fixtures.Ctx, id), "delete")
	fixtures.Must(t, f.ops.DeletePeer(fixtures.Ctx, id), "delete again")
	if _, err := f.c.GetPeer(fixtures.Ctx, id); !errors.Is(err, gd2.ErrNotFound) {
		t.Errorf("peer still there: %v", err)
	}
}

// fxReplicaSetup is a 3-zone pool with a replica-3 volume over gd2-1..3, and
// a fourth node in zone-1 with room for a replacement.
func fxReplicaSetup(t *testing.T) (f *fxGD2, victim gd2.Peer, spare string, brick gd2.BrickInfo) {
	t.Helper()
	f = newFxGD2(t, sim.Config{Peers: 3, Zones: 3, DevicesPerPeer: 2, DeviceSize: 100 * fxGiB})
	peers, err := f.c.ListPeers(fixtures.Ctx, gd2.Filter{})
	fixtures.Must(t, err, "list peers")
	for _, p := range peers {
		fixtures.Must(t, f.ops.RegisterDevice(fixtures.Ctx, p.ID, "/dev/sdb", ""), "register")
	}
	_, err = f.c.CreateVolume(fixtures.Ctx, gd2.VolumeCreateRequest{Name: "pv1", Size: fxGiB, Replica: 3})
	fixtures.Must(t, err, "create volume")
	v, err := f.c.GetVolume(fixtures.Ctx, "pv1")
	fixtures.Must(t, err, "get volume")
	for _, p := range peers {
		if p.Zone() != "zone-1" {
			continue
		}
		victim = p
		for _, b := range v.Bricks() {
			if b.PeerID == p.ID {
				brick = b
			}
		}
	}
	if brick.Path == "" {
		t.Fatalf("no brick in zone-1: %+v", v.Bricks())
	}
	spare, err = f.ops.AddPeer(fixtures.Ctx, "gd2-4:24008", "zone-1", fxNodeMeta("storage/spare"))
	fixtures.Must(t, err, "add spare")
	fixtures.Must(t, f.ops.RegisterDevice(fixtures.Ctx, spare, "/dev/sdb", ""), "register spare")
	// The leaving node takes no new bricks, as the drain action ensures.
	fixtures.Must(t, f.ops.SetDeviceEnabled(fixtures.Ctx, victim.ID, "/dev/sdb", false), "disable victim")
	return f, victim, spare, brick
}

func TestGD2OpsBrickOnPeerBeforeAndAfterReplaceBrick(t *testing.T) {
	f, victim, spare, brick := fxReplicaSetup(t)

	on, err := f.ops.BrickOnPeer(fixtures.Ctx, "pv1", victim.ID, brick.Path)
	fixtures.Must(t, err, "brick on peer before")
	if !on {
		t.Fatal("the brick is not reported on its peer")
	}
	if on, _ := f.ops.BrickOnPeer(fixtures.Ctx, "pv1", spare, brick.Path); on {
		t.Fatal("the brick is reported on the spare before the replacement")
	}

	// Same-zone replacement: GD2 counts the source's zone as used, so the
	// leaving peer is moved out of the zone first; the request goes to the
	// source's own GD2, which sizes the new brick.
	f.ops.Local = f.nodeClient(t, f.hostOf(t, victim.ID))
	fixtures.Must(t, f.ops.ReplaceBrick(fixtures.Ctx, "pv1", victim.ID, brick.Path, transitions.MoveTo{Peers: []string{spare}, SameZone: true}), "replace brick")

	on, err = f.ops.BrickOnPeer(fixtures.Ctx, "pv1", victim.ID, brick.Path)
	fixtures.Must(t, err, "brick on peer after")
	if on {
		t.Fatal("the brick is still on the leaving peer")
	}
	if on, _ := f.ops.BrickOnPeer(fixtures.Ctx, "pv1", spare, brick.Path); !on {
		t.Fatal("the brick did not land on the spare in the same zone")
	}
	p, err := f.c.GetPeer(fixtures.Ctx, victim.ID)
	fixtures.Must(t, err, "get victim")
	if p.Zone() != transitions.DrainingZone("zone-1") || p.Metadata[PeerMetaZone] != "zone-1" {
		t.Errorf("victim zone %q, recorded %q", p.Zone(), p.Metadata[PeerMetaZone])
	}
	fixtures.Must(t, f.ops.RestorePeerZone(fixtures.Ctx, victim.ID), "restore zone")
	fixtures.Must(t, f.ops.RestorePeerZone(fixtures.Ctx, victim.ID), "restore zone again")
	if p, _ := f.c.GetPeer(fixtures.Ctx, victim.ID); p.Zone() != "zone-1" {
		t.Errorf("zone after restore %q", p.Zone())
	}
	if vs := f.sim.Violations(); len(vs) != 0 {
		t.Errorf("simulator saw violations: %+v", vs)
	}
}

func TestGD2OpsReplaceBrickWithNowhereToGoIsErrNoPlacement(t *testing.T) {
	f := newFxGD2(t, sim.Config{Peers: 3, Zones: 3, DevicesPerPeer: 2, DeviceSize: 100 * fxGiB})
	peers, err := f.c.ListPeers(fixtures.Ctx, gd2.Filter{})
	fixtures.Must(t, err, "list peers")
	for _, p := range peers {
		fixtures.Must(t, f.ops.RegisterDevice(fixtures.Ctx, p.ID, "/dev/sdb", ""), "register")
	}
	_, err = f.c.CreateVolume(fixtures.Ctx, gd2.VolumeCreateRequest{Name: "pv1", Size: fxGiB, Replica: 3})
	fixtures.Must(t, err, "create volume")
	v, err := f.c.GetVolume(fixtures.Ctx, "pv1")
	fixtures.Must(t, err, "get volume")
	b := v.Bricks()[0]

	f.ops.Local = f.nodeClient(t, f.hostOf(t, b.PeerID))
	var others []string
	for _, p := range peers {
		if p.ID != b.PeerID {
			others = append(others, p.ID)
		}
	}
	err = f.ops.ReplaceBrick(fixtures.Ctx, "pv1", b.PeerID, b.Path, transitions.MoveTo{Peers: others})
	if !errors.Is(err, ErrNoPlacement) || !errors.Is(err, gd2.ErrNoCapacity) {
		t.Fatalf("err = %v, want ErrNoPlacement wrapping gd2.ErrNoCapacity", err)
	}
	if !strings.Contains(err.Error(), b.PeerID) || !strings.Contains(err.Error(), "pv1") {
		t.Errorf("error %q does not name the volume and peer", err)
	}
	if on, _ := f.ops.BrickOnPeer(fixtures.Ctx, "pv1", b.PeerID, b.Path); !on {
		t.Error("a refused replacement moved the brick")
	}
}

func TestGD2OpsBrickOnPeerOfAGoneVolumeIsFalse(t *testing.T) {
	f := newFxGD2(t, sim.Config{Peers: 1})
	on, err := f.ops.BrickOnPeer(fixtures.Ctx, "nope", "00000000-0000-0000-0000-000000000001", "/b")
	if err != nil || on {
		t.Errorf("BrickOnPeer = %t, %v; want false, nil", on, err)
	}
}

func TestGD2OpsTriggerHeal(t *testing.T) {
	f, _, _, _ := fxReplicaSetup(t)
	_, err := f.c.StartVolume(fixtures.Ctx, "pv1", false)
	fixtures.Must(t, err, "start")
	_, err = f.c.SetVolumeOptions(fixtures.Ctx, "pv1", gd2.VolumeOptionRequest{
		Options: map[string]string{"cluster/replicate.self-heal-daemon": "on"}, AllowAdvanced: true})
	fixtures.Must(t, err, "enable self-heal")
	for range 2 {
		fixtures.Must(t, f.ops.TriggerHeal(fixtures.Ctx, "pv1"), "trigger heal")
	}
	if err := f.ops.TriggerHeal(fixtures.Ctx, "nope"); !errors.Is(err, gd2.ErrNotFound) {
		t.Errorf("heal of a missing volume: %v", err)
	}
}

func TestGD2OpsForceStartBricksStartsWhatARestartLeftUnmountedAndNeverAStoppedVolume(t *testing.T) {
	f := newFxGD2(t, sim.Config{Peers: 3, Zones: 3, DevicesPerPeer: 1, DeviceSize: 100 * fxGiB, UnmountedBrickStarts: 1})
	peers, err := f.c.ListPeers(fixtures.Ctx, gd2.Filter{})
	fixtures.Must(t, err, "list peers")
	for _, p := range peers {
		fixtures.Must(t, f.ops.RegisterDevice(fixtures.Ctx, p.ID, "/dev/sdb", ""), "register")
	}
	_, err = f.c.CreateVolume(fixtures.Ctx, gd2.VolumeCreateRequest{Name: "pv1", Size: fxGiB, Replica: 3})
	fixtures.Must(t, err, "create volume")
	if err := f.ops.ForceStartBricks(fixtures.Ctx, "pv1"); !errors.Is(err, gd2.ErrVolumeNotStarted) {
		t.Fatalf("force start of a volume never started: %v; want it refused", err)
	}
	if v, _ := f.c.GetVolume(fixtures.Ctx, "pv1"); v.State != gd2.VolumeCreated {
		t.Fatalf("volume %s after a refused force start; want it left Created", v.State)
	}
	_, err = f.c.StartVolume(fixtures.Ctx, "pv1", false)
	fixtures.Must(t, err, "start")
	fixtures.Must(t, f.sim.RestartPeer(peers[0].ID), "restart")
	offline := func() int {
		bs, err := f.c.BricksStatus(fixtures.Ctx, "pv1")
		fixtures.Must(t, err, "bricks status")
		n := 0
		for _, b := range bs {
			if !b.Online {
				n++
			}
		}
		return n
	}
	if n := offline(); n != 1 {
		t.Fatalf("%d bricks offline after a restart with unmounted bricks; want 1", n)
	}
	for range 2 {
		fixtures.Must(t, f.ops.ForceStartBricks(fixtures.Ctx, "pv1"), "force start bricks")
		if n := offline(); n != 0 {
			t.Fatalf("%d bricks offline after force-start-bricks", n)
		}
	}
	_, err = f.c.StopVolume(fixtures.Ctx, "pv1")
	fixtures.Must(t, err, "stop")
	if err := f.ops.ForceStartBricks(fixtures.Ctx, "pv1"); !errors.Is(err, gd2.ErrVolumeNotStarted) {
		t.Fatalf("force start of a stopped volume: %v; want it refused", err)
	}
	if v, _ := f.c.GetVolume(fixtures.Ctx, "pv1"); v.State != gd2.VolumeStopped {
		t.Fatalf("volume %s after a refused force start; want it left Stopped", v.State)
	}
}

func TestGD2OpsSetClusterOptions(t *testing.T) {
	f := newFxGD2(t, sim.Config{Peers: 1})
	for range 2 {
		fixtures.Must(t, f.ops.SetClusterOptions(fixtures.Ctx, map[string]string{"cluster.brick-multiplex": "on"}), "set")
	}
	opts, err := f.c.ClusterOptions(fixtures.Ctx)
	fixtures.Must(t, err, "list")
	for _, o := range opts {
		if o.Key == "cluster.brick-multiplex" && o.Value != "on" {
			t.Errorf("cluster.brick-multiplex = %q, want on", o.Value)
		}
	}
	err = f.ops.SetClusterOptions(fixtures.Ctx, map[string]string{"cluster.no-such-option": "1"})
	if err == nil || !strings.Contains(err.Error(), "Invalid global option") {
		t.Errorf("an unknown option: %v, want GD2's refusal", err)
	}
}
