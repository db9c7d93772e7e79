package effects

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/gluster/anthill/gd2"
)

// Concurrent syncs of one cluster wait for the read in flight and share
// it; another cluster has its own view; errors are not kept.
func TestPoolViewsShareOneReadPerClusterAndKeepNoErrors(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	v := &PoolViews{TTL: 5 * time.Second, Clock: clk}
	var reads atomic.Int32
	read := func() ([]gd2.Peer, error) {
		reads.Add(1)
		time.Sleep(20 * time.Millisecond)
		return []gd2.Peer{{ID: "p1"}}, nil
	}
	pv := v.view("ns/a")
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if got, err := shared(v, pv, &pv.peers, v.ttl(), read); err != nil || len(got) != 1 {
				t.Errorf("shared read: %v, %v", got, err)
			}
		})
	}
	wg.Wait()
	if n := reads.Load(); n != 1 {
		t.Fatalf("8 concurrent syncs made %d reads, want 1", n)
	}
	other := v.view("ns/b")
	if _, err := shared(v, other, &other.peers, v.ttl(), read); err != nil || reads.Load() != 2 {
		t.Fatalf("another cluster shared the first one's view (%d reads, %v)", reads.Load(), err)
	}
	failing := v.view("ns/c")
	if _, err := shared(v, failing, &failing.peers, v.ttl(), func() ([]gd2.Peer, error) { return nil, errors.New("down") }); err == nil {
		t.Fatal("the error was lost")
	}
	if _, err := shared(v, failing, &failing.peers, v.ttl(), read); err != nil || reads.Load() != 3 {
		t.Fatalf("an error was kept as the view (%d reads, %v)", reads.Load(), err)
	}
}

// A read that overlapped an invalidation is returned but not kept: it may
// predate the change that invalidated the view.
func TestPoolViewsDropAReadThatOverlappedAChange(t *testing.T) {
	v := &PoolViews{TTL: time.Minute}
	pv := v.view("ns/a")
	var reads int
	if _, err := shared(v, pv, &pv.peers, v.ttl(), func() ([]gd2.Peer, error) {
		reads++
		v.Invalidate("ns/a") // a write lands while the list is read
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := shared(v, pv, &pv.peers, v.ttl(), func() ([]gd2.Peer, error) { reads++; return nil, nil }); err != nil {
		t.Fatal(err)
	}
	if reads != 2 {
		t.Fatalf("%d reads, want 2: the overlapped read must not serve the next sync", reads)
	}
	v.Forget("ns/a")
	if len(v.views) != 0 {
		t.Fatal("Forget kept the view")
	}
}

// Every operation that is not a plain read drops the view, including any
// the client adds later.
func TestOnlyReadOperationsKeepTheView(t *testing.T) {
	for _, op := range []gd2.Operation{gd2.OpPeersAdd, gd2.OpPeersEdit, gd2.OpPeersDelete, gd2.OpDevicesAdd, gd2.OpDevicesEdit,
		gd2.OpVolumesReplaceBrick, gd2.OpVolumesExpand, gd2.OpHealTrigger, gd2.OpHealSplitBrain, gd2.OpClusterOptionsSet, "some.future_call"} {
		if !changesConfig(op) {
			t.Errorf("%s keeps the view", op)
		}
	}
	for _, op := range []gd2.Operation{gd2.OpPeersList, gd2.OpDevicesListAll, gd2.OpVolumesList, gd2.OpVolumesBricksStatus, gd2.OpHealInfo} {
		if changesConfig(op) {
			t.Errorf("%s drops the view", op)
		}
	}
}

// SharedReads serves the unfiltered peer, device and volume lists from the
// view, one GD2 request each per interval; a filtered list is read from
// GD2 every time, and so is everything once the view is invalidated.
func TestSharedReadsServeTheUnfilteredListsFromTheView(t *testing.T) {
	var mu sync.Mutex
	requests := map[string]int{}
	gc := emptyGD2(t, func(r *http.Request) {
		mu.Lock()
		requests[r.URL.Path+"?"+r.URL.RawQuery]++
		mu.Unlock()
	})
	v := &PoolViews{TTL: time.Minute}
	r := v.Reads("ns/a", gc, 0)
	ctx := context.Background()
	meta := gd2.Filter{Key: "anthill.node", Value: "ns/n"}
	for range 3 {
		if _, err := r.ListPeers(ctx, gd2.Filter{}); err != nil {
			t.Fatal(err)
		}
		if _, err := r.ListAllDevices(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := r.ListVolumes(ctx, gd2.Filter{}); err != nil {
			t.Fatal(err)
		}
		if _, err := r.ListVolumes(ctx, meta); err != nil {
			t.Fatal(err)
		}
	}
	v.Invalidate("ns/a")
	if _, err := r.ListVolumes(ctx, gd2.Filter{}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	total, filtered := 0, 0
	for path, n := range requests {
		total += n
		if strings.Contains(path, "key=") {
			filtered += n
		}
	}
	// Three shared lists read once, the volume list once more after the
	// invalidation, and the three filtered reads.
	if filtered != 3 || total != 7 {
		t.Fatalf("GD2 saw %v: want each unfiltered list once (the volumes twice, across the invalidation) and every filtered read", requests)
	}
}

// Reads bound to a peer age shorter than the interval re-read the peer
// list once it is older than that; the other reads of the view keep the
// interval, and share whatever list is fresh enough for them.
func TestSharedReadsWithinAPeerAgeReadThePeersMoreOften(t *testing.T) {
	gc, clk, list := countedPeerLists(t)
	v := &PoolViews{TTL: 5 * time.Second, Clock: clk}
	liveness, other := v.Reads("ns/a", gc, time.Second), v.Reads("ns/a", gc, 0)
	list(liveness, 1)
	list(other, 1) // shares the fresh list
	clk.Step(1500 * time.Millisecond)
	list(other, 1)    // 1.5 s old: within the interval
	list(liveness, 2) // older than its second: read again
	clk.Step(1500 * time.Millisecond)
	list(other, 2) // the liveness read's list, 1.5 s old
	if got := v.Reads("ns/a", gc, time.Minute).peerTTL(); got != v.TTL {
		t.Errorf("a peer age beyond the interval serves lists up to %s old, want the interval %s", got, v.TTL)
	}
}

// countedPeerLists returns a client of an empty GD2, a fake clock, and
// list, which lists peers through r and fails the test unless GD2 has
// then been asked for its peer list want times in all.
func countedPeerLists(t *testing.T) (*gd2.Client, *clocktesting.FakeClock, func(r *SharedReads, want int32)) {
	t.Helper()
	var peers atomic.Int32
	gc := emptyGD2(t, func(r *http.Request) {
		if r.URL.Path == "/v1/peers" {
			peers.Add(1)
		}
	})
	clk := clocktesting.NewFakeClock(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	list := func(r *SharedReads, want int32) {
		t.Helper()
		if _, err := r.ListPeers(context.Background(), gd2.Filter{}); err != nil {
			t.Fatal(err)
		}
		if n := peers.Load(); n != want {
			t.Fatalf("at %s: %d peers.list, want %d", clk.Now().Format(time.TimeOnly), n, want)
		}
	}
	return gc, clk, list
}

// emptyGD2 is a client of a GD2 that answers every request with an empty
// list, after telling seen of it.
func emptyGD2(t *testing.T, seen func(*http.Request)) *gd2.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen(r)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("[]"))
	}))
	t.Cleanup(srv.Close)
	gc, err := gd2.New(gd2.Options{Endpoint: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return gc
}

// The peer watch's reads (Refresh) always go to GD2, and what they read
// serves the cluster's other readers for the interval.
func TestAPeerListRefreshReadsLiveAndServesTheOthers(t *testing.T) {
	gc, clk, list := countedPeerLists(t)
	v := &PoolViews{TTL: 15 * time.Second, Clock: clk}
	watch, other := v.Refresh("ns/a", gc), v.Reads("ns/a", gc, 0)
	list(other, 1)
	clk.Step(time.Second)
	list(watch, 2) // a second-old list is not the watch's
	list(watch, 3) // nor one read just now
	clk.Step(14 * time.Second)
	list(other, 3) // the watch's list, 14 s old
	clk.Step(2 * time.Second)
	list(other, 4)
}
