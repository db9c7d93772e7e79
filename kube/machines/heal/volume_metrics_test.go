package heal

import (
	"context"
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gluster/anthill/gd2"
	"github.com/gluster/anthill/gd2/sim"
	"github.com/gluster/anthill/kube/internal/fixtures"
	"github.com/gluster/anthill/kube/machines/gather"
)

// volumeMetricsFixture is a heal fixture whose syncer feeds VolumeMetrics,
// with a plain distribute volume "flat" beside the replica-3 "data".
func volumeMetricsFixture(t *testing.T) (*healFixture, *prometheus.Registry) {
	t.Helper()
	f := newHealFixture(t)
	f.createVolume("flat", 0)
	f.syncer.Volumes = NewVolumeMetrics()
	reg := prometheus.NewRegistry()
	reg.MustRegister(f.syncer.Volumes)
	return f, reg
}

// brickLabels is the label string of a brick's series.
func brickLabels(vol string, b gd2.BrickStatus) string {
	return fmt.Sprintf("brick=%s:%s,cluster=gc,namespace=ns,volume=%s,", b.Info.Host, b.Info.Path, vol)
}

func volLabels(vol string) string { return "cluster=gc,namespace=ns,volume=" + vol + "," }

// Every started volume, replicated or not, is exported up with GD2's own
// sizes, and each of its bricks with bricks status's sizes.
func TestVolumeMetricsExportEveryStartedVolumeAndBrickAsGD2ReportsThem(t *testing.T) {
	f, reg := volumeMetricsFixture(t)
	ctx := context.Background()
	if err := f.sim.SetVolumeUsed("flat", 300<<20); err != nil {
		t.Fatal(err)
	}
	if err := f.sim.SetVolumeUsed("data", 900<<20); err != nil {
		t.Fatal(err)
	}
	f.mustSync()

	up, capacity, used := fixtures.Gathered(t, reg, "anthill_volume_up"), fixtures.Gathered(t, reg, "anthill_volume_capacity_bytes"), fixtures.Gathered(t, reg, "anthill_volume_used_bytes")
	brickUp, brickCap, brickUsed := fixtures.Gathered(t, reg, "anthill_brick_up"), fixtures.Gathered(t, reg, "anthill_brick_capacity_bytes"), fixtures.Gathered(t, reg, "anthill_brick_used_bytes")
	for _, vol := range []string{"data", "flat"} {
		st, err := f.gd2.VolumeStatus(ctx, vol)
		if err != nil {
			t.Fatal(err)
		}
		if up[volLabels(vol)] != 1 || capacity[volLabels(vol)] != float64(st.Size.Capacity) || used[volLabels(vol)] != float64(st.Size.Used) {
			t.Errorf("volume %s: up %v capacity %v used %v, GD2 says %+v", vol, up[volLabels(vol)], capacity[volLabels(vol)], used[volLabels(vol)], st.Size)
		}
		bs, err := f.gd2.BricksStatus(ctx, vol)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bs {
			l := brickLabels(vol, b)
			if brickUp[l] != 1 || brickCap[l] != float64(b.Size.Capacity) || brickUsed[l] != float64(b.Size.Used) || b.Size.Used == 0 {
				t.Errorf("brick %s: up %v capacity %v used %v, GD2 says %+v", l, brickUp[l], brickCap[l], brickUsed[l], b.Size)
			}
		}
	}
	if len(brickUp) != 4 {
		t.Errorf("anthill_brick_up has %d series, want 3 of data and 1 of flat: %v", len(brickUp), brickUp)
	}
	if info := fixtures.Gathered(t, reg, "anthill_volume_info"); info["cluster=gc,namespace=ns,state=Started,type=Distribute,volume=flat,"] != 1 ||
		info["cluster=gc,namespace=ns,state=Started,type=Replicate,volume=data,"] != 1 {
		t.Errorf("anthill_volume_info = %v", info)
	}
}

// A brick on a node that does not answer is down and unsized; a stopped
// volume is down with no sizes or bricks; a deleted volume and a deleted
// cluster lose their series.
func TestVolumeMetricsFollowDownNodesStoppedAndDeletedVolumes(t *testing.T) {
	f, reg := volumeMetricsFixture(t)
	ctx := context.Background()
	peer := f.peerOfVolume("flat")
	if err := f.sim.SetPeerAlive(peer, false); err != nil {
		t.Fatal(err)
	}
	f.mustSync()
	bs, err := f.gd2.BricksStatus(ctx, "data")
	if err != nil {
		t.Fatal(err)
	}
	brickUp, brickCap := fixtures.Gathered(t, reg, "anthill_brick_up"), fixtures.Gathered(t, reg, "anthill_brick_capacity_bytes")
	for _, b := range bs {
		l := brickLabels("data", b)
		dead := b.Info.PeerID == peer
		if want := boolValue(!dead); brickUp[l] != want {
			t.Errorf("brick %s up = %v, want %v", l, brickUp[l], want)
		}
		if _, sized := brickCap[l]; sized == dead {
			t.Errorf("brick %s on a dead node %t has capacity series %t", l, dead, sized)
		}
	}
	if err := f.sim.SetPeerAlive(peer, true); err != nil {
		t.Fatal(err)
	}

	if _, err := f.gd2.StopVolume(ctx, "flat"); err != nil {
		t.Fatal(err)
	}
	f.mustSync()
	if up := fixtures.Gathered(t, reg, "anthill_volume_up"); up[volLabels("flat")] != 0 || up[volLabels("data")] != 1 {
		t.Errorf("anthill_volume_up = %v, want flat 0 (stopped) and data 1", up)
	}
	if _, ok := fixtures.Gathered(t, reg, "anthill_volume_capacity_bytes")[volLabels("flat")]; ok {
		t.Error("a stopped volume still has a capacity series")
	}
	if info := fixtures.Gathered(t, reg, "anthill_volume_info"); info["cluster=gc,namespace=ns,state=Stopped,type=Distribute,volume=flat,"] != 1 {
		t.Errorf("anthill_volume_info = %v", info)
	}
	if got := fixtures.Gathered(t, reg, "anthill_brick_up"); len(got) != 3 {
		t.Errorf("anthill_brick_up = %v, want only data's three bricks", got)
	}

	if err := f.gd2.DeleteVolume(ctx, "flat"); err != nil {
		t.Fatal(err)
	}
	f.mustSync()
	if up := fixtures.Gathered(t, reg, "anthill_volume_up"); len(up) != 1 {
		t.Errorf("anthill_volume_up = %v, want only data", up)
	}
	f.syncer.Forget(gather.HealKey("ns", "gc"))
	for _, name := range []string{"anthill_volume_up", "anthill_volume_info", "anthill_brick_up"} {
		if got := fixtures.Gathered(t, reg, name); len(got) != 0 {
			t.Errorf("%s after the cluster is forgotten = %v", name, got)
		}
	}
}

// A volume status GD2 cannot answer makes the volume down; a bricks
// status it cannot answer keeps the bricks' last reading; a volume list
// it cannot answer keeps everything as last read.
func TestVolumeMetricsOnGD2Failures(t *testing.T) {
	f, reg := volumeMetricsFixture(t)
	f.mustSync()
	before := fixtures.Gathered(t, reg, "anthill_brick_up")
	if err := f.sim.SetFaults(sim.Faults{PerOp: map[string]sim.OpFaults{"VolumeStatus": {ErrorRate: 1}, "VolumeBricksStatus": {ErrorRate: 1}}}); err != nil {
		t.Fatal(err)
	}
	_, _, _ = f.sync()
	if up := fixtures.Gathered(t, reg, "anthill_volume_up"); up[volLabels("data")] != 0 || up[volLabels("flat")] != 0 {
		t.Errorf("anthill_volume_up = %v, want 0 while GD2's volume status fails", up)
	}
	if got := fixtures.Gathered(t, reg, "anthill_brick_up"); fmt.Sprint(got) != fmt.Sprint(before) {
		t.Errorf("anthill_brick_up = %v, want the last reading %v", got, before)
	}
	if err := f.sim.SetFaults(sim.Faults{PerOp: map[string]sim.OpFaults{"VolumeList": {ErrorRate: 1}}}); err != nil {
		t.Fatal(err)
	}
	_, _, _ = f.sync()
	if up := fixtures.Gathered(t, reg, "anthill_volume_up"); len(up) != 2 {
		t.Errorf("anthill_volume_up = %v, want both volumes as last read", up)
	}
}
