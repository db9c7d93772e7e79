package gd2_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gluster/anthill/gd2"
)

func TestContractVolumes(t *testing.T) {
	created := func(name string) func(*testing.T, *env) {
		return func(t *testing.T, e *env) { e.manualReplica3(name) }
	}
	started := func(name string) func(*testing.T, *env) {
		return func(t *testing.T, e *env) { e.manualReplica3(name); e.start(name) }
	}
	runContract(t, []contractCase{
		{
			name: "creating a manual replica-3 volume answers 201 in state Created with GD2's naming",
			call: func(t *testing.T, e *env) error {
				v, err := e.c.CreateVolume(bg, e.manualReq("vol1", 1))
				if err != nil {
					return err
				}
				if v.State != gd2.VolumeCreated || v.Type != gd2.VolumeReplicate || v.ReplicaCount != 3 || v.DistributeCount != 1 {
					t.Errorf("volume %+v", v)
				}
				if len(v.Subvols) != 1 || v.Subvols[0].Name != "vol1-replicate-0" || v.Subvols[0].Type != gd2.SubvolReplicate {
					t.Errorf("subvols %+v", v.Subvols)
				}
				if v.Metadata["_brick-provision-type"] != "" || v.Capacity != 0 {
					t.Errorf("manual volume metadata %v capacity %d", v.Metadata, v.Capacity)
				}
				if v.Options["cluster/replicate.self-heal-daemon"] != "off" {
					t.Errorf("replicate profile should turn the self-heal daemon off: %v", v.Options)
				}
				for i, b := range v.Bricks() {
					if b.PeerID != e.peers[i].ID || b.Host != "gd2-"+string(rune('1'+i)) || b.VolumeName != "vol1" || b.Type != gd2.BrickTypeBrick {
						t.Errorf("brick %d %+v", i, b)
					}
				}
				return nil
			},
			op: gd2.OpVolumesCreate, status: 201,
		},
		{
			name:  "creating a size-based volume answers 201 with capacity and one brick per zone",
			setup: func(t *testing.T, e *env) { e.addDevices() },
			call: func(t *testing.T, e *env) error {
				v, err := e.c.CreateVolume(bg, gd2.VolumeCreateRequest{Name: "pv1", Size: GiB, Replica: 3})
				if err != nil {
					return err
				}
				if v.Capacity != GiB || v.Metadata["_brick-provision-type"] != "auto" || v.Type != gd2.VolumeReplicate {
					t.Errorf("smart volume %+v", v)
				}
				hosts := map[string]bool{}
				for _, b := range v.Bricks() {
					hosts[b.PeerID] = true
				}
				if len(hosts) != 3 {
					t.Errorf("bricks on %d peers, want 3 distinct zones", len(hosts))
				}
				devs, err := e.c.ListAllDevices(bg)
				if err != nil {
					return err
				}
				for _, d := range devs {
					if d.FreeSize >= d.TotalSize {
						t.Errorf("device %s on %s: free %d not reduced below total %d", d.Device, d.PeerID, d.FreeSize, d.TotalSize)
					}
				}
				return nil
			},
			op: gd2.OpVolumesCreate, status: 201,
		},
		{
			name: "creating a volume with an invalid name is 400",
			call: func(t *testing.T, e *env) error {
				_, err := e.c.CreateVolume(bg, e.manualReq("bad name!", 1))
				return err
			},
			op: gd2.OpVolumesCreate, status: 400, want: gd2.ErrBadRequest,
		},
		{
			name:  "creating a volume whose name exists is 400 already exists, not 409",
			setup: created("vol1"),
			call:  func(t *testing.T, e *env) error { _, err := e.c.CreateVolume(bg, e.manualReq("vol1", 1)); return err },
			op:    gd2.OpVolumesCreate, status: 400, want: gd2.ErrAlreadyExists,
		},
		{
			name: "creating a volume with a duplicate brick is 400",
			call: func(t *testing.T, e *env) error {
				req := e.manualReq("vol1", 1)
				req.Subvols[0].Bricks[1] = req.Subvols[0].Bricks[0]
				_, err := e.c.CreateVolume(bg, req)
				return err
			},
			op: gd2.OpVolumesCreate, status: 400, want: gd2.ErrBadRequest,
		},
		{
			name: "creating a volume with a malformed brick peer id is 400",
			call: func(t *testing.T, e *env) error {
				req := e.manualReq("vol1", 1)
				req.Subvols[0].Bricks[0].PeerID = "not-a-uuid"
				_, err := e.c.CreateVolume(bg, req)
				return err
			},
			op: gd2.OpVolumesCreate, status: 400, want: gd2.ErrBadRequest,
		},
		{
			name: "creating a volume on an unknown peer fails inside the transaction with 500",
			call: func(t *testing.T, e *env) error {
				req := e.manualReq("vol1", 1)
				req.Subvols[0].Bricks[0].PeerID = "5d8f2c1e-0000-4000-8000-000000000001"
				_, err := e.c.CreateVolume(bg, req)
				return err
			},
			op: gd2.OpVolumesCreate, status: 500, want: errPlain,
		},
		{
			name: "creating a volume whose brick count is not a multiple of the replica count is 500",
			call: func(t *testing.T, e *env) error {
				req := e.manualReq("vol1", 1)
				req.Subvols[0].Bricks = req.Subvols[0].Bricks[:2]
				_, err := e.c.CreateVolume(bg, req)
				return err
			},
			op: gd2.OpVolumesCreate, status: 500, want: errPlain,
		},
		{
			name: "creating a size-based volume without registered devices is 500 no capacity",
			call: func(t *testing.T, e *env) error {
				_, err := e.c.CreateVolume(bg, gd2.VolumeCreateRequest{Name: "pv1", Size: GiB, Replica: 3})
				return err
			},
			op: gd2.OpVolumesCreate, status: 500, want: gd2.ErrNoCapacity,
		},
		{
			name: "creating a size-based replica-3 volume with devices in only two zones is 500 no capacity",
			setup: func(t *testing.T, e *env) {
				for _, p := range e.peers[:2] {
					_, err := e.c.AddDevice(bg, p.ID, gd2.DeviceAddRequest{Device: "/dev/sdb"})
					e.must(err, "add device")
				}
			},
			call: func(t *testing.T, e *env) error {
				_, err := e.c.CreateVolume(bg, gd2.VolumeCreateRequest{Name: "pv1", Size: GiB, Replica: 3})
				return err
			},
			op: gd2.OpVolumesCreate, status: 500, want: gd2.ErrNoCapacity,
		},
		{
			name: "creating a size-based volume skips disabled devices",
			setup: func(t *testing.T, e *env) {
				e.addDevices()
				e.must(e.c.EditDevice(bg, e.peers[0].ID, "/dev/sdb", gd2.DeviceDisabled), "disable")
			},
			call: func(t *testing.T, e *env) error {
				_, err := e.c.CreateVolume(bg, gd2.VolumeCreateRequest{Name: "pv1", Size: GiB, Replica: 3})
				return err
			},
			op: gd2.OpVolumesCreate, status: 500, want: gd2.ErrNoCapacity,
		},
		{
			name: "listing volumes with none answers 200 with an empty list",
			call: func(t *testing.T, e *env) error {
				vs, err := e.c.ListVolumes(bg, gd2.Filter{})
				if err == nil && (vs == nil || len(vs) != 0) {
					t.Errorf("want [] (non-nil, empty), got %#v", vs)
				}
				return err
			},
			op: gd2.OpVolumesList, status: 200,
		},
		{
			name: "listing volumes filtered by metadata returns the matching volumes in name order",
			setup: func(t *testing.T, e *env) {
				for _, n := range []string{"vol2", "vol1", "vol3"} {
					req := e.manualReq(n, 1)
					if n != "vol3" {
						req.Metadata = map[string]string{"owner": "anthill"}
					}
					_, err := e.c.CreateVolume(bg, req)
					e.must(err, "create")
				}
			},
			call: func(t *testing.T, e *env) error {
				vs, err := e.c.ListVolumes(bg, gd2.Filter{Key: "owner", Value: "anthill"})
				if err == nil && (len(vs) != 2 || vs[0].Name != "vol1" || vs[1].Name != "vol2") {
					t.Errorf("got %d volumes", len(vs))
				}
				return err
			},
			op: gd2.OpVolumesList, status: 200,
		},
		{
			name:  "getting a volume answers 200",
			setup: created("vol1"),
			call: func(t *testing.T, e *env) error {
				v, err := e.c.GetVolume(bg, "vol1")
				if err == nil && (v.Name != "vol1" || v.ID == "" || len(v.Bricks()) != 3) {
					t.Errorf("volume %+v", v)
				}
				return err
			},
			op: gd2.OpVolumesGet, status: 200,
		},
		{
			name: "getting an unknown volume is 404",
			call: func(t *testing.T, e *env) error { _, err := e.c.GetVolume(bg, "nope"); return err },
			op:   gd2.OpVolumesGet, status: 404, want: gd2.ErrNotFound,
		},
		{
			name:  "starting a created volume answers 200 in state Started",
			setup: created("vol1"),
			call: func(t *testing.T, e *env) error {
				v, err := e.c.StartVolume(bg, "vol1", false)
				if err == nil && v.State != gd2.VolumeStarted {
					t.Errorf("state %s", v.State)
				}
				return err
			},
			op: gd2.OpVolumesStart, status: 200,
		},
		{
			name:  "starting a started volume is 400",
			setup: started("vol1"),
			call:  func(t *testing.T, e *env) error { _, err := e.c.StartVolume(bg, "vol1", false); return err },
			op:    gd2.OpVolumesStart, status: 400, want: gd2.ErrVolumeAlreadyStarted,
		},
		{
			name:  "force-starting a started volume answers 200",
			setup: started("vol1"),
			call:  func(t *testing.T, e *env) error { _, err := e.c.StartVolume(bg, "vol1", true); return err },
			op:    gd2.OpVolumesStart, status: 200,
		},
		{
			name: "starting an unknown volume is 404",
			call: func(t *testing.T, e *env) error { _, err := e.c.StartVolume(bg, "nope", false); return err },
			op:   gd2.OpVolumesStart, status: 404, want: gd2.ErrNotFound,
		},
		{
			name:  "stopping a started volume answers 200 in state Stopped",
			setup: started("vol1"),
			call: func(t *testing.T, e *env) error {
				v, err := e.c.StopVolume(bg, "vol1")
				if err == nil && v.State != gd2.VolumeStopped {
					t.Errorf("state %s", v.State)
				}
				return err
			},
			op: gd2.OpVolumesStop, status: 200,
		},
		{
			name: "stopping a stopped volume is 400",
			setup: func(t *testing.T, e *env) {
				started("vol1")(t, e)
				_, err := e.c.StopVolume(bg, "vol1")
				e.must(err, "stop")
			},
			call: func(t *testing.T, e *env) error { _, err := e.c.StopVolume(bg, "vol1"); return err },
			op:   gd2.OpVolumesStop, status: 400, want: gd2.ErrVolumeAlreadyStopped,
		},
		{
			name:  "stopping a volume that was never started is 400 not started",
			setup: created("vol1"),
			call:  func(t *testing.T, e *env) error { _, err := e.c.StopVolume(bg, "vol1"); return err },
			op:    gd2.OpVolumesStop, status: 400, want: gd2.ErrVolumeNotStarted,
		},
		{
			name: "stopping an unknown volume is 404",
			call: func(t *testing.T, e *env) error { _, err := e.c.StopVolume(bg, "nope"); return err },
			op:   gd2.OpVolumesStop, status: 404, want: gd2.ErrNotFound,
		},
		{
			name:  "deleting a created volume answers 204",
			setup: created("vol1"),
			call:  func(t *testing.T, e *env) error { return e.c.DeleteVolume(bg, "vol1") },
			op:    gd2.OpVolumesDelete, status: 204,
		},
		{
			name:  "deleting a size-based volume answers 204 and returns the space to its devices",
			setup: func(t *testing.T, e *env) { e.addDevices(); e.smartReplica3("pv1", GiB) },
			call: func(t *testing.T, e *env) error {
				if err := e.c.DeleteVolume(bg, "pv1"); err != nil {
					return err
				}
				devs, err := e.c.ListAllDevices(bg)
				for _, d := range devs {
					if d.FreeSize != d.TotalSize {
						t.Errorf("device %s: free %d, total %d after delete", d.Device, d.FreeSize, d.TotalSize)
					}
				}
				return err
			},
			op: gd2.OpVolumesDelete, status: 204,
		},
		{
			name:  "deleting a started volume is 400",
			setup: started("vol1"),
			call:  func(t *testing.T, e *env) error { return e.c.DeleteVolume(bg, "vol1") },
			op:    gd2.OpVolumesDelete, status: 400, want: gd2.ErrVolumeNotStopped,
		},
		{
			name: "deleting a stopped volume that has a snapshot fails its dependency (424)",
			setup: func(t *testing.T, e *env) {
				e.addDevices()
				e.smartReplica3("vol1", GiB)
				e.start("vol1")
				e.snapshot("vol1", "snap1")
				_, err := e.c.StopVolume(bg, "vol1")
				e.must(err, "stop vol1")
			},
			call: func(t *testing.T, e *env) error { return e.c.DeleteVolume(bg, "vol1") },
			op:   gd2.OpVolumesDelete, status: 424, want: gd2.ErrHasSnapshots,
		},
		{
			name: "deleting an unknown volume is 404",
			call: func(t *testing.T, e *env) error { return e.c.DeleteVolume(bg, "nope") },
			op:   gd2.OpVolumesDelete, status: 404, want: gd2.ErrNotFound,
		},
		{
			name:  "deleting a volume whose lock is held is 409",
			setup: func(t *testing.T, e *env) { created("vol1")(t, e); e.sim.HoldLock("vol1", true) },
			call:  func(t *testing.T, e *env) error { return e.c.DeleteVolume(bg, "vol1") },
			op:    gd2.OpVolumesDelete, status: 409, want: gd2.ErrLockBusy,
		},
		{
			name:  "expanding by a new replica set answers 200 with two subvolumes and the old type",
			setup: created("vol1"),
			call: func(t *testing.T, e *env) error {
				add := e.manualReq("vol1", 2).Subvols[1].Bricks
				v, err := e.c.ExpandVolume(bg, "vol1", gd2.VolumeExpandRequest{Bricks: add})
				if err == nil && (v.DistributeCount != 2 || len(v.Subvols) != 2 || v.Subvols[1].Name != "vol1-replicate-1" || v.Type != gd2.VolumeReplicate) {
					t.Errorf("expanded %+v", v)
				}
				return err
			},
			op: gd2.OpVolumesExpand, status: 200,
		},
		{
			name:  "expanding a size-based volume in place answers 200 with the capacity grown",
			setup: func(t *testing.T, e *env) { e.addDevices(); e.smartReplica3("pv1", GiB) },
			call: func(t *testing.T, e *env) error {
				v, err := e.c.ExpandVolume(bg, "pv1", gd2.VolumeExpandRequest{Size: GiB, Distribute: 1})
				if err == nil && v.Capacity != 2*GiB {
					t.Errorf("capacity %d", v.Capacity)
				}
				return err
			},
			op: gd2.OpVolumesExpand, status: 200,
		},
		{
			name:  "expanding a size-based volume in place beyond its devices is 400 no capacity",
			setup: func(t *testing.T, e *env) { e.addDevices(); e.smartReplica3("pv1", GiB) },
			call: func(t *testing.T, e *env) error {
				_, err := e.c.ExpandVolume(bg, "pv1", gd2.VolumeExpandRequest{Size: 500 * GiB, Distribute: 1})
				return err
			},
			op: gd2.OpVolumesExpand, status: 400, want: gd2.ErrNoCapacity,
		},
		{
			name: "expanding an unknown volume is 500, which still reads as not found",
			call: func(t *testing.T, e *env) error {
				_, err := e.c.ExpandVolume(bg, "nope", gd2.VolumeExpandRequest{Bricks: e.manualReq("nope", 1).Subvols[0].Bricks})
				return err
			},
			op: gd2.OpVolumesExpand, status: 500, want: gd2.ErrNotFound,
		},
		{
			name:  "expanding with a brick count that does not fit the replica count is a 500 transaction step failure",
			setup: created("vol1"),
			call: func(t *testing.T, e *env) error {
				add := e.manualReq("vol1", 2).Subvols[1].Bricks[:2]
				_, err := e.c.ExpandVolume(bg, "vol1", gd2.VolumeExpandRequest{Bricks: add})
				var apiErr *gd2.APIError
				if errors.As(err, &apiErr) {
					steps := apiErr.TxnStepFailures()
					if len(steps) == 0 || steps[0].PeerID() == "" || steps[0].Step() == "" || !strings.Contains(steps[0].StepError(), "invalid number of bricks") {
						t.Errorf("code-2 items %+v", apiErr.Errors)
					}
				}
				return err
			},
			op: gd2.OpVolumesExpand, status: 500, want: gd2.ErrTxnStepFailed,
		},
		{
			name:  "expanding with a brick the volume already has is 400",
			setup: created("vol1"),
			call: func(t *testing.T, e *env) error {
				_, err := e.c.ExpandVolume(bg, "vol1", gd2.VolumeExpandRequest{Bricks: e.manualReq("vol1", 1).Subvols[0].Bricks})
				return err
			},
			op: gd2.OpVolumesExpand, status: 400, want: gd2.ErrBadRequest,
		},
		{
			name:  "the status of a started volume answers 200 online with sizes",
			setup: started("vol1"),
			call: func(t *testing.T, e *env) error {
				st, err := e.c.VolumeStatus(bg, "vol1")
				if err == nil && (!st.Online || st.Info.Name != "vol1" || st.Size.Capacity == 0) {
					t.Errorf("status %+v", st)
				}
				return err
			},
			op: gd2.OpVolumesStatus, status: 200,
		},
		{
			name:  "the status of a volume that is not started is 400",
			setup: created("vol1"),
			call:  func(t *testing.T, e *env) error { _, err := e.c.VolumeStatus(bg, "vol1"); return err },
			op:    gd2.OpVolumesStatus, status: 400, want: gd2.ErrVolumeNotStarted,
		},
		{
			name: "the status of an unknown volume is 404",
			call: func(t *testing.T, e *env) error { _, err := e.c.VolumeStatus(bg, "nope"); return err },
			op:   gd2.OpVolumesStatus, status: 404, want: gd2.ErrNotFound,
		},
		{
			name: "bricks status lists a brick on a dead peer as offline with only its info",
			setup: func(t *testing.T, e *env) {
				started("vol1")(t, e)
				e.must(e.sim.SetPeerAlive(e.peers[2].ID, false), "down")
			},
			call: func(t *testing.T, e *env) error {
				bs, err := e.c.BricksStatus(bg, "vol1")
				if err != nil {
					return err
				}
				if len(bs) != 3 {
					t.Fatalf("%d bricks", len(bs))
				}
				for _, b := range bs {
					dead := b.Info.PeerID == e.peers[2].ID
					if dead && (b.Online || b.PID != 0 || b.Port != 0) {
						t.Errorf("dead brick %+v", b)
					}
					if !dead && (!b.Online || b.PID == 0 || b.Port == 0) {
						t.Errorf("live brick %+v", b)
					}
				}
				return nil
			},
			op: gd2.OpVolumesBricksStatus, status: 200,
		},
		{
			name: "bricks status of an unknown volume is 404",
			call: func(t *testing.T, e *env) error { _, err := e.c.BricksStatus(bg, "nope"); return err },
			op:   gd2.OpVolumesBricksStatus, status: 404, want: gd2.ErrNotFound,
		},
		{
			name:  "editing volume metadata merges and deletes keys with 200",
			setup: created("vol1"),
			call: func(t *testing.T, e *env) error {
				if _, err := e.c.EditVolume(bg, "vol1", gd2.VolumeEditRequest{Metadata: map[string]string{"a": "1", "b": "2"}}); err != nil {
					return err
				}
				v, err := e.c.EditVolume(bg, "vol1", gd2.VolumeEditRequest{Metadata: map[string]string{"a": ""}, DeleteMetadata: true})
				if err == nil {
					if _, ok := v.Metadata["a"]; ok || v.Metadata["b"] != "2" {
						t.Errorf("metadata %v", v.Metadata)
					}
				}
				return err
			},
			op: gd2.OpVolumesEdit, status: 200,
		},
		{
			name:  "editing volume metadata with a reserved underscore key is 400",
			setup: created("vol1"),
			call: func(t *testing.T, e *env) error {
				_, err := e.c.EditVolume(bg, "vol1", gd2.VolumeEditRequest{Metadata: map[string]string{"_x": "1"}})
				return err
			},
			op: gd2.OpVolumesEdit, status: 400, want: gd2.ErrBadRequest,
		},
		{
			name:  "editing volume metadata past 4 KiB is 400",
			setup: created("vol1"),
			call: func(t *testing.T, e *env) error {
				_, err := e.c.EditVolume(bg, "vol1", gd2.VolumeEditRequest{Metadata: map[string]string{"k": strings.Repeat("v", 5000)}})
				return err
			},
			op: gd2.OpVolumesEdit, status: 400, want: gd2.ErrBadRequest,
		},
		{
			name: "editing an unknown volume is 404",
			call: func(t *testing.T, e *env) error {
				_, err := e.c.EditVolume(bg, "nope", gd2.VolumeEditRequest{Metadata: map[string]string{"a": "1"}})
				return err
			},
			op: gd2.OpVolumesEdit, status: 404, want: gd2.ErrNotFound,
		},
		{
			name:  "setting an advanced option with its allow flag answers 200 with the option set",
			setup: created("vol1"),
			call: func(t *testing.T, e *env) error {
				v, err := e.c.SetVolumeOptions(bg, "vol1", gd2.VolumeOptionRequest{
					Options: map[string]string{"cluster/replicate.self-heal-daemon": "on"}, AllowAdvanced: true})
				if err == nil && v.Options["cluster/replicate.self-heal-daemon"] != "on" {
					t.Errorf("options %v", v.Options)
				}
				return err
			},
			op: gd2.OpVolumesOptionsSet, status: 200,
		},
		{
			name:  "setting an advanced option without its allow flag is 500 code 2 invalid option",
			setup: created("vol1"),
			call: func(t *testing.T, e *env) error {
				_, err := e.c.SetVolumeOptions(bg, "vol1", gd2.VolumeOptionRequest{Options: map[string]string{"cluster/replicate.self-heal-daemon": "on"}})
				return err
			},
			op: gd2.OpVolumesOptionsSet, status: 500, want: gd2.ErrInvalidOption,
		},
		{
			name:  "setting an unknown option is 500 code 2 invalid option",
			setup: created("vol1"),
			call: func(t *testing.T, e *env) error {
				_, err := e.c.SetVolumeOptions(bg, "vol1", gd2.VolumeOptionRequest{Options: map[string]string{"no.such-option": "1"}})
				return err
			},
			op: gd2.OpVolumesOptionsSet, status: 500, want: gd2.ErrInvalidOption,
		},
		{
			name: "setting options on an unknown volume is 404",
			call: func(t *testing.T, e *env) error {
				_, err := e.c.SetVolumeOptions(bg, "nope", gd2.VolumeOptionRequest{Options: map[string]string{"cluster/replicate.quorum-type": "auto"}})
				return err
			},
			op: gd2.OpVolumesOptionsSet, status: 404, want: gd2.ErrNotFound,
		},
		{
			name:  "getting all volume options answers 200 with values and defaults",
			setup: created("vol1"),
			call: func(t *testing.T, e *env) error {
				opts, err := e.c.VolumeOptions(bg, "vol1")
				if err != nil {
					return err
				}
				for _, o := range opts {
					if o.Name == "cluster/replicate.self-heal-daemon" {
						if o.Value != "off" || !o.Modified || o.DefaultValue == "" || o.OptionLevel == "" {
							t.Errorf("option %+v", o)
						}
						return nil
					}
				}
				t.Errorf("self-heal-daemon missing from %d options", len(opts))
				return nil
			},
			op: gd2.OpVolumesOptionsGet, status: 200,
		},
		{
			name:  "getting one volume option by its slash-free name answers 200",
			setup: created("vol1"),
			call: func(t *testing.T, e *env) error {
				o, err := e.c.VolumeOption(bg, "vol1", "replicate.self-heal-daemon")
				if err == nil && o.Value != "off" {
					t.Errorf("option %+v", o)
				}
				return err
			},
			op: gd2.OpVolumesOptionsGet, status: 200,
		},
		{
			name:  "resetting a volume option answers 200 and restores the default",
			setup: func(t *testing.T, e *env) { created("vol1")(t, e); e.enableSelfHeal("vol1") },
			call: func(t *testing.T, e *env) error {
				err := e.c.ResetVolumeOptions(bg, "vol1", gd2.VolumeOptionResetRequest{Options: []string{"cluster/replicate.quorum-type"}, All: false})
				return err
			},
			op: gd2.OpVolumesOptionsReset, status: 200,
		},
	})
}
