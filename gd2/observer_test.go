package gd2

import (
	"context"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

type observation struct {
	op     Operation
	status int
}

type observations struct {
	mu  sync.Mutex
	got []observation
}

func (o *observations) ObserveRequest(op Operation, status int, d time.Duration) {
	if d < 0 {
		panic("negative duration")
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.got = append(o.got, observation{op, status})
}

func TestObserverSeesBoundedOperationNamesNeverPaths(t *testing.T) {
	rec := newRecorder(t, jsonAnswer(http.StatusOK, `{}`))
	obs := &observations{}
	c := rec.client(t, func(o *Options) { o.Observer = obs })
	ctx := context.Background()
	_, _ = c.GetVolume(ctx, "secret-volume-name")
	_, _ = c.GetPeer(ctx, "5d8f2c1e-0000-4000-8000-000000000001")
	_ = c.EditDevice(ctx, "5d8f2c1e-0000-4000-8000-000000000001", "/dev/sdb", DeviceEnabled)
	_, _ = c.HealInfo(ctx, "vol1", HealInfoSplitBrain)
	want := []observation{{OpVolumesGet, 200}, {OpPeersGet, 200}, {OpDevicesEdit, 200}, {OpHealInfo, 200}}
	if !slices.Equal(obs.got, want) {
		t.Fatalf("observed %v, want %v", obs.got, want)
	}
}

func TestObserverReportsEachAttemptAndZeroWithoutResponse(t *testing.T) {
	rec := newRecorder(t, jsonAnswer(500, envelope("x")), jsonAnswer(409, lockBody), jsonAnswer(200, `[]`))
	obs := &observations{}
	c := rec.client(t, func(o *Options) { o.Observer = obs })
	if _, err := c.ListPeers(context.Background(), Filter{}); err != nil {
		t.Fatal(err)
	}
	want := []observation{{OpPeersList, 500}, {OpPeersList, 409}, {OpPeersList, 200}}
	if !slices.Equal(obs.got, want) {
		t.Fatalf("observed %v, want %v", obs.got, want)
	}

	url := rec.srv.URL
	rec.srv.Close()
	obs2 := &observations{}
	c2, _ := New(Options{Endpoint: url, Observer: obs2, Retry: &RetryPolicy{MaxAttempts: 1}})
	_ = c2.Ping(context.Background())
	if !slices.Equal(obs2.got, []observation{{OpPing, 0}}) {
		t.Fatalf("observed %v, want one ping with status 0", obs2.got)
	}
}

func TestOperationNamesAreUniqueAndMetricFriendly(t *testing.T) {
	valid := regexp.MustCompile(`^[a-z]+(\.[a-z_]+)?$`)
	seen := map[Operation]bool{}
	for _, op := range allOperations() {
		if !valid.MatchString(string(op)) || strings.Contains(string(op), "/") {
			t.Errorf("operation %q is not a plain label", op)
		}
		if seen[op] {
			t.Errorf("operation %q listed twice", op)
		}
		seen[op] = true
	}
}

// allOperations is every Operation the client can report, in a stable
// order.
func allOperations() []Operation {
	return []Operation{
		OpPing, OpVersion, OpEndpoints,
		OpPeersList, OpPeersGet, OpPeersAdd, OpPeersEdit, OpPeersDelete,
		OpVolumesCreate, OpVolumesList, OpVolumesGet, OpVolumesStart, OpVolumesStop,
		OpVolumesDelete, OpVolumesExpand, OpVolumesStatus, OpVolumesBricksStatus,
		OpVolumesEdit, OpVolumesOptionsGet, OpVolumesOptionsSet, OpVolumesOptionsReset,
		OpVolumesReplaceBrick,
		OpHealInfo, OpHealTrigger, OpHealSplitBrain,
		OpRebalanceStart, OpRebalanceStatus, OpRebalanceStop,
		OpDevicesAdd, OpDevicesList, OpDevicesListAll, OpDevicesGet, OpDevicesEdit,
		OpClusterOptionsGet, OpClusterOptionsSet,
	}
}
