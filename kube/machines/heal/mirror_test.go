package heal

import (
	"context"
	"testing"
	"time"

	"github.com/gluster/anthill/fsm"
	"github.com/gluster/anthill/gd2"
	"github.com/gluster/anthill/gd2/sim"
	"github.com/gluster/anthill/states"
	"github.com/gluster/anthill/transitions"
)

// wantHealMirror fails unless the volume's GD2 metadata carries the heal
// state status.volumes holds, and the time it was entered.
func (f *healFixture) wantHealMirror(name string, want fsm.State) {
	f.t.Helper()
	v, err := f.gd2.GetVolume(context.Background(), name)
	if err != nil {
		f.t.Fatal(err)
	}
	st := f.volume(name)
	if st.State != string(want) {
		f.t.Fatalf("volume %s is %s in status, want %s", name, st.State, want)
	}
	if got := v.Metadata[transitions.MetaHealState]; got != string(want) {
		f.t.Fatalf("volume %s metadata %s = %q, want %q (metadata %v)", name, transitions.MetaHealState, got, want, v.Metadata)
	}
	since := st.LastTransitionTime.UTC().Format(time.RFC3339)
	if got := v.Metadata[transitions.MetaHealSince]; got != since {
		f.t.Fatalf("volume %s metadata %s = %q, want %q", name, transitions.MetaHealSince, got, since)
	}
}

func TestHealSyncerMirrorsEveryTransitionIntoTheVolumesMetadata(t *testing.T) {
	f := newHealFixture(t)
	_, added := f.mustSync()
	wantTransition(t, added, "data", states.HealUnknown, states.HealHealthy)
	f.wantHealMirror("data", states.HealHealthy)

	peer := f.peerOfVolume("data")
	if err := f.sim.SetPeerAlive(peer, false); err != nil {
		t.Fatal(err)
	}
	if err := f.sim.Write("data", 40); err != nil {
		t.Fatal(err)
	}
	f.clock.Step(time.Second)
	_, added = f.mustSync()
	wantTransition(t, added, "data", states.HealHealthy, states.HealHealPending)
	f.wantHealMirror("data", states.HealHealPending)

	if err := f.sim.SetPeerAlive(peer, true); err != nil {
		t.Fatal(err)
	}
	_, added = f.mustSync()
	wantTransition(t, added, "data", states.HealHealPending, states.HealHealing)
	f.wantHealMirror("data", states.HealHealing)

	f.clock.Step(time.Minute)
	_, added = f.mustSync()
	wantTransition(t, added, "data", states.HealHealing, states.HealHealthy)
	f.wantHealMirror("data", states.HealHealthy)
}

func TestHealSyncerSkipsTheMirrorWriteWhenTheVolumeAlreadySaysIt(t *testing.T) {
	f := newHealFixture(t)
	f.mustSync() // Unknown -> Healthy, mirrored
	if n := f.volumeEdits.Load(); n != 1 {
		t.Fatalf("%d volume edits for one transition; want 1", n)
	}
	for range 3 {
		f.clock.Step(time.Minute)
		f.mustSync()
	}
	if n := f.volumeEdits.Load(); n != 1 {
		t.Fatalf("%d volume edits after steady syncs; want still 1", n)
	}
	// Anything else in the volume's metadata is left alone.
	if _, err := f.gd2.EditVolume(context.Background(), "data", gd2.VolumeEditRequest{Metadata: map[string]string{"owner": "csi"}}); err != nil {
		t.Fatal(err)
	}
	f.mustSync()
	v, err := f.gd2.GetVolume(context.Background(), "data")
	if err != nil {
		t.Fatal(err)
	}
	if v.Metadata["owner"] != "csi" || f.volumeEdits.Load() != 2 {
		t.Fatalf("metadata %v after %d edits; want the admin's key kept and no mirror write", v.Metadata, f.volumeEdits.Load())
	}
}

func TestHealSyncerCommitsTheTransitionWhenTheMirrorWriteFailsAndRepairsItNextSync(t *testing.T) {
	f := newHealFixture(t)
	if err := f.sim.SetFaults(sim.Faults{PerOp: map[string]sim.OpFaults{"VolumeEdit": {ErrorRate: 1}}}); err != nil {
		t.Fatal(err)
	}
	res, added, err := f.sync()
	if err != nil {
		t.Fatalf("a failed mirror write failed the sync: %v", err)
	}
	wantTransition(t, added, "data", states.HealUnknown, states.HealHealthy)
	if res.RequeueAfter != DefaultHealInterval {
		t.Fatalf("result %+v; a failed mirror is no reason to back off", res)
	}
	v, err := f.gd2.GetVolume(context.Background(), "data")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := v.Metadata[transitions.MetaHealState]; ok {
		t.Fatalf("metadata %v written through a failing edit", v.Metadata)
	}
	if err := f.sim.SetFaults(sim.Faults{}); err != nil {
		t.Fatal(err)
	}
	f.clock.Step(time.Minute)
	if _, added := f.mustSync(); len(added) != 0 {
		t.Fatalf("repair sync committed %+v", added)
	}
	f.wantHealMirror("data", states.HealHealthy)
}

func TestHealSyncerWritesNoMetadataOnVolumesItDoesNotTrack(t *testing.T) {
	f := newHealFixture(t)
	f.tagPeersForAnotherCluster()
	f.mustSync()
	if n := f.volumeEdits.Load(); n != 0 {
		t.Fatalf("%d volume edits on another cluster's volume; want none", n)
	}
	// GD2 unreachable: the volumes in status are re-decided (Unknown), but
	// nothing can be mirrored and the sync does not try.
	f2 := newHealFixture(t)
	f2.mustSync()
	if err := f2.sim.SetFaults(sim.Faults{ErrorRate: 1}); err != nil {
		t.Fatal(err)
	}
	before := f2.volumeEdits.Load()
	f2.clock.Step(time.Minute)
	if _, _, err := f2.sync(); err != nil {
		t.Fatal(err)
	}
	if n := f2.volumeEdits.Load() - before; n != 0 {
		t.Fatalf("%d volume edits while GD2 fails every request; want none", n)
	}
}
