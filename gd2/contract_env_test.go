package gd2_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/gluster/anthill/gd2"
	"github.com/gluster/anthill/gd2/sim"
)

const contractSecret = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

// GiB and MiB keep sizes readable.
const (
	MiB = uint64(1) << 20
	GiB = uint64(1) << 30
)

// env is one simulator served over real HTTP plus a client talking to it.
type env struct {
	t     *testing.T
	sim   *sim.Simulator
	clock *clocktesting.FakeClock
	url   string
	c     *gd2.Client
	log   *statusLog
	// peers are the pre-created members ordered by host name (gd2-1...).
	peers []gd2.Peer
}

// statusLog remembers the HTTP status of each attempt per operation, so
// tests check GD2's exact status codes through the client's Observer.
type statusLog struct {
	mu   sync.Mutex
	last map[gd2.Operation][]int
}

func (l *statusLog) ObserveRequest(op gd2.Operation, status int, _ time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.last[op] = append(l.last[op], status)
}

func (l *statusLog) statuses(op gd2.Operation) []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]int(nil), l.last[op]...)
}

// newEnv starts a 3-peer, 3-zone simulator with auth on, a fake clock and
// a client that makes exactly one attempt per call (so status checks see
// GD2's answer, not a retry's).
func newEnv(t *testing.T, mutate ...func(*sim.Config)) *env {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	cfg := sim.Config{Secret: contractSecret, Seed: 7, Peers: 3, Zones: 3, Clock: clk, DeviceSize: 100 * GiB}
	for _, m := range mutate {
		m(&cfg)
	}
	s, err := sim.New(cfg)
	if err != nil {
		t.Fatalf("sim.New: %v", err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		srv.Close()
		_ = s.Close()
	})
	e := &env{t: t, sim: s, clock: clk, url: srv.URL, log: &statusLog{last: map[gd2.Operation][]int{}}}
	e.c = e.client()
	if cfg.Peers > 0 {
		peers, err := e.c.ListPeers(context.Background(), gd2.Filter{})
		if err != nil {
			t.Fatalf("list peers: %v", err)
		}
		sort.Slice(peers, func(i, j int) bool { return peers[i].Name < peers[j].Name })
		e.peers = peers
	}
	return e
}

// client builds another client to the same simulator.
func (e *env) client(mutate ...func(*gd2.Options)) *gd2.Client {
	e.t.Helper()
	opts := gd2.Options{
		Endpoint: e.url, Secret: contractSecret, Observer: e.log,
		Retry: &gd2.RetryPolicy{MaxAttempts: 1}, Timeout: 10 * time.Second,
		// Tokens follow the simulator's clock, which checks exp.
		Now: e.clock.Now,
	}
	for _, m := range mutate {
		m(&opts)
	}
	c, err := gd2.New(opts)
	if err != nil {
		e.t.Fatalf("gd2.New: %v", err)
	}
	return c
}

func (e *env) must(err error, what string) {
	e.t.Helper()
	if err != nil {
		e.t.Fatalf("%s: %v", what, err)
	}
}

// addDevices registers /dev/sdb on every pre-created peer.
func (e *env) addDevices() {
	e.t.Helper()
	for _, p := range e.peers {
		_, err := e.c.AddDevice(context.Background(), p.ID, gd2.DeviceAddRequest{Device: "/dev/sdb"})
		e.must(err, "add device on "+p.Name)
	}
}

// manualReplica3 creates a replica-3 volume with one brick per peer.
func (e *env) manualReplica3(name string) *gd2.Volume {
	e.t.Helper()
	v, err := e.c.CreateVolume(context.Background(), e.manualReq(name, 1))
	e.must(err, "create "+name)
	return v
}

// manualReq is a manual layout of n replica-3 subvolumes over the 3 peers.
func (e *env) manualReq(name string, subvols int) gd2.VolumeCreateRequest {
	req := gd2.VolumeCreateRequest{Name: name}
	for s := range subvols {
		sv := gd2.SubvolRequest{Type: gd2.SubvolReqReplicate, Replica: 3}
		for i, p := range e.peers[:3] {
			sv.Bricks = append(sv.Bricks, gd2.BrickRequest{PeerID: p.ID, Path: fmt.Sprintf("/bricks/%s/s%d/b%d", name, s, i)})
		}
		req.Subvols = append(req.Subvols, sv)
	}
	return req
}

// smartReplica3 creates a size-based replica-3 volume from registered
// devices.
func (e *env) smartReplica3(name string, size uint64) *gd2.Volume {
	e.t.Helper()
	v, err := e.c.CreateVolume(context.Background(), gd2.VolumeCreateRequest{Name: name, Size: size, Replica: 3})
	e.must(err, "create smart "+name)
	return v
}

func (e *env) start(name string) {
	e.t.Helper()
	_, err := e.c.StartVolume(context.Background(), name, false)
	e.must(err, "start "+name)
}

// snapshot takes a snapshot of a started volume through GD2's snapshot
// API, which the client has no call for (anthill takes none; the CSI
// driver does).
func (e *env) snapshot(vol, snap string) {
	e.t.Helper()
	body := strings.NewReader(`{"volname":"` + vol + `","snapname":"` + snap + `"}`)
	req, err := http.NewRequest(http.MethodPost, e.url+"/v1/snapshots", body)
	e.must(err, "snapshot request")
	tok, err := sim.Token(contractSecret, req.Method, req.URL.Path, e.clock.Now(), time.Minute)
	e.must(err, "token")
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	e.must(err, "snapshot "+vol)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		e.t.Fatalf("snapshot %s: status %d", vol, resp.StatusCode)
	}
}

// enableSelfHeal turns on the (advanced) self-heal daemon option that GD2
// leaves off on replicate volumes.
func (e *env) enableSelfHeal(name string) {
	e.t.Helper()
	_, err := e.c.SetVolumeOptions(context.Background(), name, gd2.VolumeOptionRequest{
		Options: map[string]string{"cluster/replicate.self-heal-daemon": "on"}, AllowAdvanced: true})
	e.must(err, "enable self-heal on "+name)
}

// nodeClient is a client whose every request is served by the simulated
// host name, addressed as a pod behind a headless Service would be.
func (e *env) nodeClient(name string) *gd2.Client {
	e.t.Helper()
	u, err := url.Parse(e.url)
	e.must(err, "parse simulator URL")
	return e.client(func(o *gd2.Options) {
		o.Endpoint = "http://" + name + ".gd2.anthill.svc:24007"
		o.DialAddress = u.Host
	})
}
