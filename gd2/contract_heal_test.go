package gd2_test

import (
	"testing"

	"github.com/gluster/anthill/gd2"
)

func TestContractHealAndReplaceBrick(t *testing.T) {
	started := func(t *testing.T, e *env) { e.manualReplica3("vol1"); e.start("vol1") }
	runContract(t, []contractCase{
		{
			name:  "heal info of a healthy started volume answers 200 with zero entries per connected brick",
			setup: started,
			call: func(t *testing.T, e *env) error {
				hi, err := e.c.HealInfo(bg, "vol1", gd2.HealInfoEntries)
				if err != nil {
					return err
				}
				if len(hi) != 3 {
					t.Fatalf("%d bricks", len(hi))
				}
				for _, b := range hi {
					if b.Status != "Connected" || b.Entries == nil || *b.Entries != 0 || b.TotalEntries != nil || b.HostID == "" {
						t.Errorf("brick %+v", b)
					}
				}
				return nil
			},
			op: gd2.OpHealInfo, status: 200,
		},
		{
			name: "heal info summary reports pending entries on live bricks and -1 on the dead one",
			setup: func(t *testing.T, e *env) {
				started(t, e)
				e.must(e.sim.SetPeerAlive(e.peers[2].ID, false), "down")
				e.must(e.sim.Write("vol1", 40), "write")
			},
			call: func(t *testing.T, e *env) error {
				hi, err := e.c.HealInfo(bg, "vol1", gd2.HealInfoSummary)
				if err != nil {
					return err
				}
				for _, b := range hi {
					if b.EntriesInHealPending == nil || b.TotalEntries == nil || b.EntriesInSplitBrain == nil || b.EntriesPossiblyHealing == nil || b.Entries != nil {
						t.Fatalf("summary counters missing or extra: %+v", b)
					}
					if b.HostID == "-" {
						if !b.BrickDown() || b.Status == "Connected" {
							t.Errorf("dead brick %+v", b)
						}
						continue
					}
					if *b.EntriesInHealPending < 40 {
						t.Errorf("live brick pending %d, want >= 40", *b.EntriesInHealPending)
					}
				}
				return nil
			},
			op: gd2.OpHealInfo, status: 200,
		},
		{
			name: "split-brain info lists the files in split-brain",
			setup: func(t *testing.T, e *env) {
				started(t, e)
				e.must(e.sim.InjectSplitBrain("vol1", 0, []string{"/a"}), "split-brain")
			},
			call: func(t *testing.T, e *env) error {
				hi, err := e.c.HealInfo(bg, "vol1", gd2.HealInfoSplitBrain)
				if err == nil && (len(hi) == 0 || hi[0].Entries == nil || *hi[0].Entries != 1 || len(hi[0].Files) != 1 || hi[0].Files[0].Filename != "/a") {
					t.Errorf("split-brain info %+v", hi)
				}
				return err
			},
			op: gd2.OpHealInfo, status: 200,
		},
		{
			name:  "heal info with the unaccepted option info is 500",
			setup: started,
			call:  func(t *testing.T, e *env) error { _, err := e.c.HealInfo(bg, "vol1", "info"); return err },
			op:    gd2.OpHealInfo, status: 500, want: errPlain,
		},
		{
			name:  "heal info of a volume that is not started is 400",
			setup: func(t *testing.T, e *env) { e.manualReplica3("vol1") },
			call:  func(t *testing.T, e *env) error { _, err := e.c.HealInfo(bg, "vol1", gd2.HealInfoEntries); return err },
			op:    gd2.OpHealInfo, status: 400, want: gd2.ErrVolumeNotStarted,
		},
		{
			name: "heal info of a distribute volume is 400 invalid for the volume type",
			setup: func(t *testing.T, e *env) {
				req := e.manualReq("dist", 1)
				req.Subvols[0].Type, req.Subvols[0].Replica = gd2.SubvolReqDistribute, 0
				_, err := e.c.CreateVolume(bg, req)
				e.must(err, "create")
				e.start("dist")
			},
			call: func(t *testing.T, e *env) error { _, err := e.c.HealInfo(bg, "dist", gd2.HealInfoEntries); return err },
			op:   gd2.OpHealInfo, status: 400, want: gd2.ErrUnsupportedVolumeType,
		},
		{
			name: "heal info of an unknown volume is 404",
			call: func(t *testing.T, e *env) error { _, err := e.c.HealInfo(bg, "nope", gd2.HealInfoEntries); return err },
			op:   gd2.OpHealInfo, status: 404, want: gd2.ErrNotFound,
		},
		{
			name:  "heal info while the volume lock is held is 409",
			setup: func(t *testing.T, e *env) { started(t, e); e.sim.HoldLock("vol1", true) },
			call:  func(t *testing.T, e *env) error { _, err := e.c.HealInfo(bg, "vol1", gd2.HealInfoEntries); return err },
			op:    gd2.OpHealInfo, status: 409, want: gd2.ErrLockBusy,
		},
		{
			name:  "triggering heal with the self-heal daemon off is 400",
			setup: started,
			call:  func(t *testing.T, e *env) error { return e.c.Heal(bg, "vol1", gd2.HealIndex) },
			op:    gd2.OpHealTrigger, status: 400, want: gd2.ErrSelfHealDisabled,
		},
		{
			name:  "triggering an index heal with the daemon on answers 200 with an empty body",
			setup: func(t *testing.T, e *env) { started(t, e); e.enableSelfHeal("vol1") },
			call:  func(t *testing.T, e *env) error { return e.c.Heal(bg, "vol1", gd2.HealIndex) },
			op:    gd2.OpHealTrigger, status: 200,
		},
		{
			name:  "triggering a full heal answers 200",
			setup: func(t *testing.T, e *env) { started(t, e); e.enableSelfHeal("vol1") },
			call:  func(t *testing.T, e *env) error { return e.c.Heal(bg, "vol1", gd2.HealFull) },
			op:    gd2.OpHealTrigger, status: 200,
		},
		{
			name:  "triggering heal of an unknown type is 400",
			setup: func(t *testing.T, e *env) { started(t, e); e.enableSelfHeal("vol1") },
			call:  func(t *testing.T, e *env) error { return e.c.Heal(bg, "vol1", "bogus") },
			op:    gd2.OpHealTrigger, status: 400, want: gd2.ErrBadRequest,
		},
		{
			name:  "triggering heal of a volume that is not started is 400",
			setup: func(t *testing.T, e *env) { e.manualReplica3("vol1"); e.enableSelfHeal("vol1") },
			call:  func(t *testing.T, e *env) error { return e.c.Heal(bg, "vol1", gd2.HealIndex) },
			op:    gd2.OpHealTrigger, status: 400, want: gd2.ErrVolumeNotStarted,
		},
		{
			name: "triggering heal of an unknown volume is 404",
			call: func(t *testing.T, e *env) error { return e.c.Heal(bg, "nope", gd2.HealIndex) },
			op:   gd2.OpHealTrigger, status: 404, want: gd2.ErrNotFound,
		},
		{
			name: "resolving split-brain by latest mtime answers 200 and clears the file",
			setup: func(t *testing.T, e *env) {
				started(t, e)
				e.must(e.sim.InjectSplitBrain("vol1", 0, []string{"/a"}), "split-brain")
			},
			call: func(t *testing.T, e *env) error {
				if err := e.c.ResolveSplitBrain(bg, "vol1", gd2.SplitBrainLatestMtime, gd2.SplitBrainRequest{Filename: "/a"}); err != nil {
					return err
				}
				hi, err := e.c.HealInfo(bg, "vol1", gd2.HealInfoSplitBrain)
				if err == nil && *hi[0].Entries != 0 {
					t.Errorf("split-brain left: %+v", hi[0])
				}
				return nil
			},
			op: gd2.OpHealSplitBrain, status: 200,
		},
		{
			name: "resolving split-brain from a source brick clears its replica set",
			setup: func(t *testing.T, e *env) {
				started(t, e)
				e.must(e.sim.InjectSplitBrain("vol1", 0, []string{"/a", "/b"}), "split-brain")
			},
			call: func(t *testing.T, e *env) error {
				v, err := e.c.GetVolume(bg, "vol1")
				if err != nil {
					return err
				}
				b := v.Bricks()[0]
				return e.c.ResolveSplitBrain(bg, "vol1", gd2.SplitBrainSourceBrick, gd2.SplitBrainRequest{Hostname: b.Host, BrickName: b.Path})
			},
			op: gd2.OpHealSplitBrain, status: 200,
		},
		{
			name:  "resolving split-brain by bigger file without a file name is 400",
			setup: started,
			call: func(t *testing.T, e *env) error {
				return e.c.ResolveSplitBrain(bg, "vol1", gd2.SplitBrainBiggerFile, gd2.SplitBrainRequest{})
			},
			op: gd2.OpHealSplitBrain, status: 400, want: gd2.ErrBadRequest,
		},
		{
			name:  "resolving split-brain from a source brick without the brick is 400",
			setup: started,
			call: func(t *testing.T, e *env) error {
				return e.c.ResolveSplitBrain(bg, "vol1", gd2.SplitBrainSourceBrick, gd2.SplitBrainRequest{Filename: "/a"})
			},
			op: gd2.OpHealSplitBrain, status: 400, want: gd2.ErrBadRequest,
		},
		{
			name:  "resolving split-brain with an unknown policy is 400",
			setup: started,
			call: func(t *testing.T, e *env) error {
				return e.c.ResolveSplitBrain(bg, "vol1", "coin-toss", gd2.SplitBrainRequest{Filename: "/a"})
			},
			op: gd2.OpHealSplitBrain, status: 400, want: gd2.ErrBadRequest,
		},
		{
			name: "replace-brick answers 200 and the client returns the volume after the replacement",
			setup: func(t *testing.T, e *env) {
				e.addDevices()
				e.smartReplica3("pv1", GiB)
				e.start("pv1")
				p4, err := e.c.AddPeer(bg, gd2.PeerAddRequest{Addresses: []string{"gd2-4"}, Zone: "zone-4"})
				e.must(err, "add peer")
				_, err = e.c.AddDevice(bg, p4.ID, gd2.DeviceAddRequest{Device: "/dev/sdb"})
				e.must(err, "add device")
			},
			call: func(t *testing.T, e *env) error {
				old, err := e.c.GetVolume(bg, "pv1")
				if err != nil {
					return err
				}
				src := old.Bricks()[0]
				// GD2 sizes the new brick on the serving node: only the
				// source brick's own node can serve a replace-brick.
				v, err := e.nodeClient(src.Host).ReplaceBrick(bg, "pv1", gd2.ReplaceBrickRequest{SrcPeerID: src.PeerID, SrcBrickPath: src.Path})
				if err != nil {
					return err
				}
				nb := v.Bricks()[0]
				if nb.PeerID == src.PeerID || nb.Path != src.Path || nb.ID == src.ID {
					t.Errorf("brick not replaced: before %+v after %+v", src, nb)
				}
				return nil
			},
			op: gd2.OpVolumesReplaceBrick, status: 200,
		},
		{
			name:  "replace-brick with a malformed source peer id is 400",
			setup: started,
			call: func(t *testing.T, e *env) error {
				_, err := e.c.ReplaceBrick(bg, "vol1", gd2.ReplaceBrickRequest{SrcPeerID: "bad"})
				return err
			},
			op: gd2.OpVolumesReplaceBrick, status: 400, want: gd2.ErrBadRequest,
		},
		{
			name: "replace-brick on an unknown volume is 404",
			call: func(t *testing.T, e *env) error {
				_, err := e.c.ReplaceBrick(bg, "nope", gd2.ReplaceBrickRequest{SrcPeerID: e.peers[0].ID, SrcBrickPath: "/b"})
				return err
			},
			op: gd2.OpVolumesReplaceBrick, status: 404, want: gd2.ErrNotFound,
		},
		{
			name:  "replace-brick without any registered device is 500 no volume groups",
			setup: started,
			call: func(t *testing.T, e *env) error {
				_, err := e.c.ReplaceBrick(bg, "vol1", gd2.ReplaceBrickRequest{SrcPeerID: e.peers[0].ID, SrcBrickPath: "/bricks/vol1/s0/b0"})
				return err
			},
			op: gd2.OpVolumesReplaceBrick, status: 500, want: gd2.ErrNoCapacity,
		},
		{
			name: "replace-brick with devices only in the volume's own zones is 500 no capacity",
			setup: func(t *testing.T, e *env) {
				e.addDevices()
				started(t, e)
			},
			call: func(t *testing.T, e *env) error {
				_, err := e.c.ReplaceBrick(bg, "vol1", gd2.ReplaceBrickRequest{SrcPeerID: e.peers[0].ID, SrcBrickPath: "/bricks/vol1/s0/b0"})
				return err
			},
			op: gd2.OpVolumesReplaceBrick, status: 500, want: gd2.ErrNoCapacity,
		},
	})
}
