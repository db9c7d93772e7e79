package main

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gluster/anthill/gd2"
	"github.com/gluster/anthill/gd2/sim"
	"github.com/gluster/anthill/transitions"
)

const sandboxTestSecret = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// sandboxPool is a simulated pool like the sandbox's: two peers in each
// of three zones, each tagged with its GlusterNode and with a device.
func sandboxPool(t *testing.T) *gd2.Client {
	t.Helper()
	s, err := sim.New(sim.Config{Secret: sandboxTestSecret, Peers: 6, Zones: 3, DevicesPerPeer: 1, DeviceSize: 100 << 30})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(func() { srv.Close(); _ = s.Close() })
	g, err := gd2.New(gd2.Options{Endpoint: srv.URL, Secret: sandboxTestSecret})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	peers, err := g.ListPeers(ctx, gd2.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range peers {
		if _, err := g.EditPeer(ctx, p.ID, gd2.PeerEditRequest{Metadata: map[string]string{transitions.MetaNode: "gluster/node-" + p.Name}}); err != nil {
			t.Fatal(err)
		}
		if _, err := g.AddDevice(ctx, p.ID, gd2.DeviceAddRequest{Device: "/dev/sdb"}); err != nil {
			t.Fatal(err)
		}
	}
	return g
}

func TestSandboxVolumesAreAReplica3AndA2x3StartedWithSelfHeal(t *testing.T) {
	g := sandboxPool(t)
	ctx := context.Background()
	for range 2 { // a second run keeps what exists
		if err := createSandboxVolumes(ctx, g); err != nil {
			t.Fatal(err)
		}
	}
	for name, sets := range map[string]int{sandboxReplicaVolume: 1, sandboxDistRepVolume: 2} {
		v, err := g.GetVolume(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if v.State != gd2.VolumeStarted || len(v.Subvols) != sets || v.Options["cluster/replicate.self-heal-daemon"] != "on" {
			t.Errorf("volume %s: state %s, %d replica sets, options %v; want Started, %d, self-heal on", name, v.State, len(v.Subvols), v.Options, sets)
		}
		for _, sv := range v.Subvols {
			if len(sv.Bricks) != 3 {
				t.Errorf("volume %s replica set %s has %d bricks", name, sv.Name, len(sv.Bricks))
			}
		}
	}
	layout, err := brickLayout(ctx, g)
	if err != nil {
		t.Fatal(err)
	}
	if len(layout) != 9 {
		t.Fatalf("%d bricks in the layout, want 9", len(layout))
	}
	node, n := busiestNode(layout)
	if !strings.HasPrefix(node, "node-") || n < 1 {
		t.Errorf("busiest node %q with %d bricks; want a GlusterNode name holding bricks", node, n)
	}
	var out strings.Builder
	walkthrough{online: 6, kubeconfig: "/k", admin: "kubectl gluster", pluginDir: "/bin", dev: "anthill-dev", dir: "/d", layout: layout}.write(&out)
	for _, want := range []string{
		"all 6 Gluster nodes are Online", sandboxReplicaVolume + " ", sandboxDistRepVolume + " ", "replica set 1 on node-",
		"kubectl gluster node decommission " + node + " -n gluster", "kubectl gluster status gluster -n gluster", "kubectl gluster transitions -f -n gluster",
		"export PATH=/bin:$PATH",
		"anthill-dev sandbox down --dir /d",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("walkthrough lacks %q:\n%s", want, out.String())
		}
	}
}

func TestSandboxBricksFitTheSmallestDevice(t *testing.T) {
	tests := []struct {
		name    string
		devices []gd2.Device
		want    uint64
	}{
		{"large devices take the default", []gd2.Device{{State: gd2.DeviceEnabled, FreeSize: 100 << 30}}, sandboxBrickSize},
		{"a small device leaves room for a replacement", []gd2.Device{{State: gd2.DeviceEnabled, FreeSize: 100 << 30}, {State: gd2.DeviceEnabled, FreeSize: 8 << 30}}, 2 << 30},
		{"disabled devices do not count", []gd2.Device{{State: gd2.DeviceDisabled, FreeSize: 1 << 30}}, sandboxBrickSize},
		{"never below GD2's minimum", []gd2.Device{{State: gd2.DeviceEnabled, FreeSize: 1 << 20}}, 20 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sandboxBrickSizeFor(tt.devices); got != tt.want {
				t.Errorf("brick size %d, want %d", got, tt.want)
			}
		})
	}
}
