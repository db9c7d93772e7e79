package gd2_test

import (
	"testing"
	"time"

	"github.com/gluster/anthill/gd2"
)

const unknownPeer = "5d8f2c1e-0000-4000-8000-000000000001"

func TestContractDevices(t *testing.T) {
	runContract(t, []contractCase{
		{
			name: "registering a device answers 201 enabled with its free size",
			call: func(t *testing.T, e *env) error {
				d, err := e.c.AddDevice(bg, e.peers[0].ID, gd2.DeviceAddRequest{Device: "/dev/sdb"})
				if err == nil && (d.Device != "/dev/sdb" || d.State != gd2.DeviceEnabled || d.PeerID != e.peers[0].ID || d.FreeSize == 0 || d.Provisioner != gd2.ProvisionerLVM) {
					t.Errorf("device %+v", d)
				}
				return err
			},
			op: gd2.OpDevicesAdd, status: 201,
		},
		{
			name:  "registering a device twice is 400 already exists",
			setup: func(t *testing.T, e *env) { e.addDevices() },
			call: func(t *testing.T, e *env) error {
				_, err := e.c.AddDevice(bg, e.peers[0].ID, gd2.DeviceAddRequest{Device: "/dev/sdb"})
				return err
			},
			op: gd2.OpDevicesAdd, status: 400, want: gd2.ErrAlreadyExists,
		},
		{
			name: "registering a device on a malformed peer id is 400",
			call: func(t *testing.T, e *env) error {
				_, err := e.c.AddDevice(bg, "bad", gd2.DeviceAddRequest{Device: "/dev/sdb"})
				return err
			},
			op: gd2.OpDevicesAdd, status: 400, want: gd2.ErrBadRequest,
		},
		{
			name: "registering a device on an unknown peer is 404",
			call: func(t *testing.T, e *env) error {
				_, err := e.c.AddDevice(bg, unknownPeer, gd2.DeviceAddRequest{Device: "/dev/sdb"})
				return err
			},
			op: gd2.OpDevicesAdd, status: 404, want: gd2.ErrNotFound,
		},
		{
			name:  "registering a device on a dead peer is 500",
			setup: func(t *testing.T, e *env) { e.must(e.sim.SetPeerAlive(e.peers[2].ID, false), "down") },
			call: func(t *testing.T, e *env) error {
				_, err := e.c.AddDevice(bg, e.peers[2].ID, gd2.DeviceAddRequest{Device: "/dev/sdb"})
				return err
			},
			op: gd2.OpDevicesAdd, status: 500, want: errPlain,
		},
		{
			name:  "registering a device whose lock is held is 409",
			setup: func(t *testing.T, e *env) { e.sim.HoldLock(e.peers[0].ID+"/dev/sdb", true) },
			call: func(t *testing.T, e *env) error {
				_, err := e.c.AddDevice(bg, e.peers[0].ID, gd2.DeviceAddRequest{Device: "/dev/sdb"})
				return err
			},
			op: gd2.OpDevicesAdd, status: 409, want: gd2.ErrLockBusy,
		},
		{
			name:  "listing one peer's devices answers 200",
			setup: func(t *testing.T, e *env) { e.addDevices() },
			call: func(t *testing.T, e *env) error {
				ds, err := e.c.ListDevices(bg, e.peers[1].ID)
				if err == nil && (len(ds) != 1 || ds[0].PeerID != e.peers[1].ID) {
					t.Errorf("devices %+v", ds)
				}
				return err
			},
			op: gd2.OpDevicesList, status: 200,
		},
		{
			name: "listing the devices of a peer without any answers 200 with an empty list",
			call: func(t *testing.T, e *env) error {
				ds, err := e.c.ListDevices(bg, e.peers[1].ID)
				if err == nil && len(ds) != 0 {
					t.Errorf("devices %+v", ds)
				}
				return err
			},
			op: gd2.OpDevicesList, status: 200,
		},
		{
			name: "listing devices of a malformed peer id is 400",
			call: func(t *testing.T, e *env) error { _, err := e.c.ListDevices(bg, "bad"); return err },
			op:   gd2.OpDevicesList, status: 400, want: gd2.ErrBadRequest,
		},
		{
			name:  "listing all devices answers 200 with every peer's devices",
			setup: func(t *testing.T, e *env) { e.addDevices() },
			call: func(t *testing.T, e *env) error {
				ds, err := e.c.ListAllDevices(bg)
				if err == nil && len(ds) != 3 {
					t.Errorf("%d devices", len(ds))
				}
				return err
			},
			op: gd2.OpDevicesListAll, status: 200,
		},
		{
			name:  "getting one device answers 200 with a one-element list",
			setup: func(t *testing.T, e *env) { e.addDevices() },
			call: func(t *testing.T, e *env) error {
				d, err := e.c.GetDevice(bg, e.peers[0].ID, "/dev/sdb")
				if err == nil && (d.Device != "/dev/sdb" || d.PeerID != e.peers[0].ID) {
					t.Errorf("device %+v", d)
				}
				return err
			},
			op: gd2.OpDevicesGet, status: 200,
		},
		{
			name: "getting an unregistered device is 500, which still reads as not found",
			call: func(t *testing.T, e *env) error { _, err := e.c.GetDevice(bg, e.peers[0].ID, "/dev/sdz"); return err },
			op:   gd2.OpDevicesGet, status: 500, want: gd2.ErrNotFound,
		},
		{
			name:  "disabling a device answers 200 with an empty body and shows in the device",
			setup: func(t *testing.T, e *env) { e.addDevices() },
			call: func(t *testing.T, e *env) error {
				if err := e.c.EditDevice(bg, e.peers[0].ID, "/dev/sdb", gd2.DeviceDisabled); err != nil {
					return err
				}
				d, err := e.c.GetDevice(bg, e.peers[0].ID, "/dev/sdb")
				if err == nil && d.State != gd2.DeviceDisabled {
					t.Errorf("state %s", d.State)
				}
				return nil
			},
			op: gd2.OpDevicesEdit, status: 200,
		},
		{
			name:  "setting a device to an unknown state is 400",
			setup: func(t *testing.T, e *env) { e.addDevices() },
			call:  func(t *testing.T, e *env) error { return e.c.EditDevice(bg, e.peers[0].ID, "/dev/sdb", "broken") },
			op:    gd2.OpDevicesEdit, status: 400, want: gd2.ErrBadRequest,
		},
		{
			name: "editing an unregistered device is 500",
			call: func(t *testing.T, e *env) error {
				return e.c.EditDevice(bg, e.peers[0].ID, "/dev/sdz", gd2.DeviceEnabled)
			},
			op: gd2.OpDevicesEdit, status: 500, want: errPlain,
		},
	})
}

func TestContractRebalanceAndClusterOptions(t *testing.T) {
	twoSubvols := func(t *testing.T, e *env) {
		_, err := e.c.CreateVolume(bg, e.manualReq("vol2", 2))
		e.must(err, "create")
		e.start("vol2")
	}
	runContract(t, []contractCase{
		{
			name:  "starting a rebalance answers 200 with the rebalance id that status then reports",
			setup: twoSubvols,
			call: func(t *testing.T, e *env) error {
				id, err := e.c.StartRebalance(bg, "vol2", gd2.RebalanceDefault)
				if err != nil {
					return err
				}
				st, err := e.c.RebalanceStatus(bg, "vol2")
				if err == nil && (id == "" || st.RebalanceID != id || st.Volume != "vol2" || len(st.Nodes) == 0) {
					t.Errorf("id %q status %+v", id, st)
				}
				return nil
			},
			op: gd2.OpRebalanceStart, status: 200,
		},
		{
			name: "a rebalance completes after its duration on the simulator's clock",
			setup: func(t *testing.T, e *env) {
				twoSubvols(t, e)
				_, err := e.c.StartRebalance(bg, "vol2", gd2.RebalanceFixLayout)
				e.must(err, "start")
			},
			call: func(t *testing.T, e *env) error {
				e.clock.Step(time.Minute)
				st, err := e.c.RebalanceStatus(bg, "vol2")
				if err == nil {
					for _, n := range st.Nodes {
						if n.Status != gd2.RebalanceComplete {
							t.Errorf("node %+v", n)
						}
					}
				}
				return err
			},
			op: gd2.OpRebalanceStatus, status: 200,
		},
		{
			name: "stopping a running rebalance answers 200",
			setup: func(t *testing.T, e *env) {
				twoSubvols(t, e)
				_, err := e.c.StartRebalance(bg, "vol2", "")
				e.must(err, "start")
			},
			call: func(t *testing.T, e *env) error {
				info, err := e.c.StopRebalance(bg, "vol2")
				if err == nil && info.Volname != "vol2" {
					t.Errorf("stop answer %+v", info)
				}
				return err
			},
			op: gd2.OpRebalanceStop, status: 200,
		},
		{
			name:  "starting a rebalance with an unknown option is 400",
			setup: twoSubvols,
			call:  func(t *testing.T, e *env) error { _, err := e.c.StartRebalance(bg, "vol2", "turbo"); return err },
			op:    gd2.OpRebalanceStart, status: 400, want: gd2.ErrBadRequest,
		},
		{
			name:  "starting a rebalance on a single-subvolume volume is 400 not a distribute volume",
			setup: func(t *testing.T, e *env) { e.manualReplica3("vol1"); e.start("vol1") },
			call:  func(t *testing.T, e *env) error { _, err := e.c.StartRebalance(bg, "vol1", ""); return err },
			op:    gd2.OpRebalanceStart, status: 400, want: gd2.ErrUnsupportedVolumeType,
		},
		{
			name: "starting a rebalance on a volume that is not started is 400",
			setup: func(t *testing.T, e *env) {
				_, err := e.c.CreateVolume(bg, e.manualReq("vol2", 2))
				e.must(err, "create")
			},
			call: func(t *testing.T, e *env) error { _, err := e.c.StartRebalance(bg, "vol2", ""); return err },
			op:   gd2.OpRebalanceStart, status: 400, want: gd2.ErrVolumeNotStarted,
		},
		{
			name: "starting a rebalance on an unknown volume is 404",
			call: func(t *testing.T, e *env) error { _, err := e.c.StartRebalance(bg, "nope", ""); return err },
			op:   gd2.OpRebalanceStart, status: 404, want: gd2.ErrNotFound,
		},
		{
			name:  "rebalance status of a volume never rebalanced is 404",
			setup: twoSubvols,
			call:  func(t *testing.T, e *env) error { _, err := e.c.RebalanceStatus(bg, "vol2"); return err },
			op:    gd2.OpRebalanceStatus, status: 404, want: gd2.ErrNotFound,
		},
		{
			name:  "stopping a rebalance that never started is 400",
			setup: twoSubvols,
			call:  func(t *testing.T, e *env) error { _, err := e.c.StopRebalance(bg, "vol2"); return err },
			op:    gd2.OpRebalanceStop, status: 400, want: gd2.ErrRebalanceNotStarted,
		},
		{
			name: "cluster options answer 200 with every known key and its default",
			call: func(t *testing.T, e *env) error {
				opts, err := e.c.ClusterOptions(bg)
				if err != nil {
					return err
				}
				want := map[string]string{"cluster.brick-multiplex": "off", "cluster.op-version": "50000", "cluster.max-bricks-per-process": "250"}
				for _, o := range opts {
					if d, ok := want[o.Key]; ok {
						if o.Default != d || o.Modified {
							t.Errorf("option %+v", o)
						}
						delete(want, o.Key)
					}
				}
				if len(want) != 0 {
					t.Errorf("missing %v", want)
				}
				return nil
			},
			op: gd2.OpClusterOptionsGet, status: 200,
		},
		{
			name: "setting a cluster option answers 200 with every explicitly set option",
			call: func(t *testing.T, e *env) error {
				set, err := e.c.SetClusterOptions(bg, map[string]string{"cluster.brick-multiplex": "on"})
				if err == nil && set["cluster.brick-multiplex"] != "on" {
					t.Errorf("answer %v", set)
				}
				return err
			},
			op: gd2.OpClusterOptionsSet, status: 200,
		},
		{
			name: "setting an unknown cluster option is 500 invalid global option",
			call: func(t *testing.T, e *env) error {
				_, err := e.c.SetClusterOptions(bg, map[string]string{"cluster.nonsense": "1"})
				return err
			},
			op: gd2.OpClusterOptionsSet, status: 500, want: gd2.ErrInvalidOption,
		},
		{
			name:  "setting cluster options while their lock is held is 409",
			setup: func(t *testing.T, e *env) { e.sim.HoldLock("clusteroptions", true) },
			call: func(t *testing.T, e *env) error {
				_, err := e.c.SetClusterOptions(bg, map[string]string{"cluster.brick-multiplex": "on"})
				return err
			},
			op: gd2.OpClusterOptionsSet, status: 409, want: gd2.ErrLockBusy,
		},
	})
}

// TestContractLockContentionIsRetriedUntilTheLockIsFree drives the retry
// policy against the simulator: a mutating call refused with GD2's 409 is
// repeated and succeeds once the other transaction lets go.
func TestContractLockContentionIsRetriedUntilTheLockIsFree(t *testing.T) {
	e := newEnv(t)
	e.manualReplica3("vol1")
	e.sim.HoldLock("vol1", true)
	var attempts int
	c := e.client(func(o *gd2.Options) {
		o.Retry = &gd2.RetryPolicy{MaxAttempts: 5, BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}
		o.Observer = gd2.ObserverFunc(func(op gd2.Operation, status int, _ time.Duration) {
			attempts++
			if attempts == 2 {
				e.sim.HoldLock("vol1", false)
			}
		})
	})
	v, err := c.StartVolume(bg, "vol1", false)
	if err != nil || v.State != gd2.VolumeStarted {
		t.Fatalf("start: %v", err)
	}
	if attempts != 3 {
		t.Fatalf("%d attempts, want 3 (two refused, one accepted)", attempts)
	}
}
