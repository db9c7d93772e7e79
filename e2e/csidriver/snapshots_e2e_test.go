//go:build e2e

package csidriver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gluster/anthill/e2e/framework"
	"github.com/gluster/anthill/gd2/sim"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/objects"
)

const simSecret = "5f1e0c3b9a7d4e2f8c6b1a0d9e8f7c6b5a4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b"

// gd2 is the simulator as a GD2 client sees it: real HTTP, GD2's tokens.
type gd2 struct {
	t   *testing.T
	url string
}

// do sends one request and returns its status and body.
func (g gd2) do(method, path string, body any) (int, []byte) {
	g.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			g.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, g.url+path, rd)
	if err != nil {
		g.t.Fatal(err)
	}
	tok, err := sim.Token(simSecret, method, req.URL.Path, time.Now(), time.Minute)
	if err != nil {
		g.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		g.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		g.t.Fatal(err)
	}
	return resp.StatusCode, b
}

// get decodes a 200 answer into v.
func (g gd2) get(path string, v any) {
	g.t.Helper()
	code, b := g.do(http.MethodGet, path, nil)
	if code != http.StatusOK {
		g.t.Fatalf("GET %s: %d %s", path, code, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		g.t.Fatalf("GET %s: %v: %s", path, err, b)
	}
}

// The parts of GD2's volume and snapshot JSON the test reads.
type volume struct {
	Name     string            `json:"name"`
	State    string            `json:"state"`
	Metadata map[string]string `json:"metadata"`
	SnapList []string          `json:"snap-list"`
	Capacity uint64            `json:"capacity"`
	Subvols  []struct {
		Bricks []struct {
			Path string `json:"path"`
		} `json:"bricks"`
	} `json:"subvols"`
}

type snapshot struct {
	Vol    volume `json:"snapinfo"`
	Parent string `json:"parentname"`
}

// startSim serves a three-peer simulator, one zone each, its devices
// registered for GD2's LVM provisioner (the driver's default brick type).
func startSim(t *testing.T) gd2 {
	s, err := sim.New(sim.Config{Secret: simSecret, Peers: 3, Zones: 3, Seed: 53})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() {
		_ = srv.Close()
		_ = s.Close()
	})
	g := gd2{t: t, url: "http://" + l.Addr().String()}
	var peers []struct {
		ID string `json:"id"`
	}
	g.get("/v1/peers", &peers)
	for _, p := range peers {
		if code, b := g.do(http.MethodPost, "/v1/devices/"+p.ID, map[string]string{"device": "/dev/sdb"}); code != http.StatusCreated {
			t.Fatalf("register a device of %s: %d %s", p.ID, code, b)
		}
	}
	return g
}

// driverArgs are the arguments of the csi-driver container anthill's
// controller Deployment gives the driver, as Kubernetes expands them
// ($(NODE_ID), $(REST_SECRET)), with two changes: the socket in dir, and
// the simulator where the management Service would be.
func driverArgs(t *testing.T, dir, restURL string) []string {
	c := &operatorv1alpha1.GlusterCluster{ObjectMeta: metav1.ObjectMeta{Name: "gc", Namespace: "ns"}}
	c.Spec.Drivers = []operatorv1alpha1.GlusterDriver{operatorv1alpha1.GlusterDriverFile}
	c.Spec.CSI = &operatorv1alpha1.CSISpec{Snapshots: &operatorv1alpha1.CSISnapshots{Enabled: true}}
	dep := objects.CSIControllerDeployment(c, operatorv1alpha1.GlusterDriverFile, "4.1.0")
	var args []string
	for _, ctr := range dep.Spec.Template.Spec.Containers {
		if ctr.Name == "csi-driver" {
			args = ctr.Args
		}
	}
	if len(args) == 0 {
		t.Fatal("the controller Deployment has no csi-driver container")
	}
	expand := strings.NewReplacer("$(NODE_ID)", "kube-node-1", "$(REST_SECRET)", simSecret)
	out := make([]string, 0, len(args)+1)
	for _, a := range args {
		switch {
		case strings.HasPrefix(a, "--endpoint="):
			out = append(out, "--endpoint=unix://"+filepath.Join(dir, "csi.sock"))
		case strings.HasPrefix(a, "--resturl="):
			out = append(out, "--resturl="+restURL)
		default:
			out = append(out, expand.Replace(a))
		}
	}
	return append(out, "--v=4")
}

// startDriver runs the driver and connects to its socket.
func startDriver(t *testing.T, bin string, args []string, sock string) *grpc.ClientConn {
	framework.StartLogged(t, exec.Command(bin, args...), filepath.Join(t.TempDir(), "driver.log"), "driver")
	err := framework.WaitFor(context.Background(), time.Minute, func(context.Context) (bool, error) {
		if _, err := os.Stat(sock); err != nil {
			return false, fmt.Errorf("no socket yet: %v", err)
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// TestCSIDriverSnapshotsOnTheSimulator: the 2019 driver, started with the
// arguments anthill's controller pod gives it, takes a snapshot of a
// volume, lists it, restores it into a new volume and deletes it, over its
// CSI socket as csi-snapshotter and csi-provisioner call it, against the
// simulator's GD2 snapshot API; the simulator's state is checked after
// each call. A volume with a snapshot cannot be deleted (GD2's 424): the
// driver fails DeleteVolume and the volume and its snapshot stay. Deleting
// a snapshot that is gone fails (GD2 answers 500 to the deactivate, which
// the driver does not take as done).
func TestCSIDriverSnapshotsOnTheSimulator(t *testing.T) {
	bin, err := framework.RealCSIDriver()
	if err != nil {
		t.Skipf("no built CSI driver (make csi-driver, docs/testing.md#the-real-csi-driver): %v", err)
	}
	g := startSim(t)
	dir, err := os.MkdirTemp("", "csi") // short: a unix socket path is at most 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	conn := startDriver(t, bin, driverArgs(t, dir, g.url), filepath.Join(dir, "csi.sock"))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ids, ctl := csi.NewIdentityClient(conn), csi.NewControllerClient(conn)

	info, err := ids.GetPluginInfo(ctx, &csi.GetPluginInfoRequest{})
	if err != nil || info.Name != objects.CSIFileDriverName {
		t.Fatalf("GetPluginInfo = %v, %v; want %s", info, err, objects.CSIFileDriverName)
	}
	caps, err := ctl.ControllerGetCapabilities(ctx, &csi.ControllerGetCapabilitiesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var snaps bool
	for _, c := range caps.Capabilities {
		snaps = snaps || c.GetRpc().GetType() == csi.ControllerServiceCapability_RPC_CREATE_DELETE_SNAPSHOT
	}
	if !snaps {
		t.Fatalf("the driver does not advertise CREATE_DELETE_SNAPSHOT: %v", caps)
	}

	const size = 1 << 30
	mount := []*csi.VolumeCapability{{
		AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER},
	}}
	vol, err := ctl.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "pvc-src", CapacityRange: &csi.CapacityRange{RequiredBytes: size}, VolumeCapabilities: mount})
	if err != nil {
		t.Fatalf("CreateVolume: %v", err)
	}
	var src volume
	g.get("/v1/volumes/pvc-src", &src)
	if vol.Volume.VolumeId != "pvc-src" || src.State != "Started" || src.Metadata["VolumeOwner"] != objects.CSIFileDriverName {
		t.Fatalf("source volume %+v (CSI %v)", src, vol.Volume)
	}

	t.Run("CreateSnapshot takes and activates a GD2 snapshot", func(t *testing.T) {
		for range 2 { // the sidecar retries: the second call finds it
			got, err := ctl.CreateSnapshot(ctx, &csi.CreateSnapshotRequest{Name: "snapshot-1", SourceVolumeId: "pvc-src"})
			if err != nil {
				t.Fatalf("CreateSnapshot: %v", err)
			}
			if s := got.Snapshot; s.SnapshotId != "snapshot-1" || s.SourceVolumeId != "pvc-src" || !s.ReadyToUse || s.SizeBytes != size {
				t.Fatalf("snapshot %v", s)
			}
		}
		var sn snapshot
		g.get("/v1/snapshots/snapshot-1", &sn)
		if sn.Parent != "pvc-src" || sn.Vol.State != "Started" || sn.Vol.Metadata["_brick-provision-type"] != "snapshot" {
			t.Errorf("GD2 snapshot %+v", sn)
		}
		g.get("/v1/volumes/pvc-src", &src)
		if len(src.SnapList) != 1 || src.SnapList[0] != "snapshot-1" {
			t.Errorf("source snap-list %v", src.SnapList)
		}
	})

	t.Run("ListSnapshots finds it by id, by source and among all", func(t *testing.T) {
		for name, req := range map[string]*csi.ListSnapshotsRequest{
			"id": {SnapshotId: "snapshot-1"}, "source": {SourceVolumeId: "pvc-src"}, "all": {},
		} {
			got, err := ctl.ListSnapshots(ctx, req)
			if err != nil {
				t.Fatalf("ListSnapshots by %s: %v", name, err)
			}
			if len(got.Entries) != 1 || got.Entries[0].Snapshot.SnapshotId != "snapshot-1" || got.Entries[0].Snapshot.SourceVolumeId != "pvc-src" {
				t.Errorf("ListSnapshots by %s: %v", name, got.Entries)
			}
		}
		got, err := ctl.ListSnapshots(ctx, &csi.ListSnapshotsRequest{SnapshotId: "snapshot-none"})
		if err != nil || len(got.Entries) != 0 {
			t.Errorf("ListSnapshots of a missing id = %v, %v; want no entry", got, err)
		}
	})

	t.Run("CreateVolume from the snapshot clones it into a started volume", func(t *testing.T) {
		_, err := ctl.CreateVolume(ctx, &csi.CreateVolumeRequest{
			Name: "pvc-restored", CapacityRange: &csi.CapacityRange{RequiredBytes: size}, VolumeCapabilities: mount,
			VolumeContentSource: &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Snapshot{
				Snapshot: &csi.VolumeContentSource_SnapshotSource{SnapshotId: "snapshot-1"},
			}},
		})
		if err != nil {
			t.Fatalf("CreateVolume from snapshot-1: %v", err)
		}
		var clone volume
		g.get("/v1/volumes/pvc-restored", &clone)
		clonePath := regexp.MustCompile(`^/var/run/glusterd2/clones/pvc-restored/subvol1/brick[123]/brick$`)
		if clone.State != "Started" || clone.Capacity != size || clone.Metadata["VolumeOwner"] != objects.CSIFileDriverName ||
			clone.Metadata["_brick-provision-type"] != "snapshot" || !clonePath.MatchString(clone.Subvols[0].Bricks[0].Path) {
			t.Errorf("restored volume %+v", clone)
		}
	})

	t.Run("a volume with a snapshot is not deleted", func(t *testing.T) {
		_, err := ctl.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: "pvc-src"})
		if status.Code(err) != codes.Internal || !strings.Contains(err.Error(), "snapshots") {
			t.Fatalf("DeleteVolume of a volume with a snapshot = %v; want Internal naming its snapshots", err)
		}
		g.get("/v1/volumes/pvc-src", &src)
		var sn snapshot
		g.get("/v1/snapshots/snapshot-1", &sn)
		if src.State != "Stopped" || len(src.SnapList) != 1 {
			t.Errorf("after the refused delete the source is %s with snapshots %v; want Stopped (the driver stops it first) with its snapshot", src.State, src.SnapList)
		}
	})

	t.Run("DeleteSnapshot removes it; a second delete fails", func(t *testing.T) {
		if _, err := ctl.DeleteSnapshot(ctx, &csi.DeleteSnapshotRequest{SnapshotId: "snapshot-1"}); err != nil {
			t.Fatalf("DeleteSnapshot: %v", err)
		}
		if code, b := g.do(http.MethodGet, "/v1/snapshots/snapshot-1", nil); code != http.StatusNotFound {
			t.Errorf("GD2 still has snapshot-1: %d %s", code, b)
		}
		g.get("/v1/volumes/pvc-src", &src)
		if len(src.SnapList) != 0 {
			t.Errorf("source snap-list %v after the delete", src.SnapList)
		}
		if _, err := ctl.DeleteSnapshot(ctx, &csi.DeleteSnapshotRequest{SnapshotId: "snapshot-1"}); status.Code(err) != codes.Internal {
			t.Errorf("a second DeleteSnapshot = %v; want Internal (GD2 answers 500 snapshot not found to the deactivate)", err)
		}
	})

	t.Run("then the source volume is deleted and the restored one lives on", func(t *testing.T) {
		if _, err := ctl.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: "pvc-src"}); err != nil {
			t.Fatalf("DeleteVolume: %v", err)
		}
		if code, b := g.do(http.MethodGet, "/v1/volumes/pvc-src", nil); code != http.StatusNotFound {
			t.Errorf("pvc-src still there: %d %s", code, b)
		}
		var clone volume
		g.get("/v1/volumes/pvc-restored", &clone)
		if clone.State != "Started" {
			t.Errorf("restored volume %s after its source went", clone.State)
		}
	})
}
