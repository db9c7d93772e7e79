package sim

import (
	"context"
	"net/http"
	"testing"
	"time"
)

func TestFaultDecisionsAreDeterministic(t *testing.T) {
	f := Faults{ErrorRate: 0.2, ConflictRate: 0.2, HangRate: 0.1}
	seq := func(seed int64) []faultKind {
		fi := newFaultInjector(seed, f)
		out := make([]faultKind, 200)
		for i := range out {
			out[i] = fi.decide("VolumeCreate").kind
		}
		return out
	}
	a, b, c := seq(42), seq(42), seq(43)
	same := true
	counts := map[faultKind]int{}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("seed 42 diverged at %d", i)
		}
		if a[i] != c[i] {
			same = false
		}
		counts[a[i]]++
	}
	if same {
		t.Errorf("different seeds gave the same sequence")
	}
	if counts[faultError] == 0 || counts[faultConflict] == 0 || counts[faultHang] == 0 || counts[faultNone] == 0 {
		t.Errorf("every kind should occur: %v", counts)
	}
}

func TestFaultsOverHTTP(t *testing.T) {
	h := newHarness(t, Config{Peers: 1, Faults: Faults{PerOp: map[string]OpFaults{
		"GetPeers":   {ErrorRate: 1},
		"EditPeer":   {ErrorRate: 1},
		"GetPeer":    {ConflictRate: 1},
		"AddPeer":    {HangRate: 1},
		"VolumeList": {Latency: time.Second},
	}}})
	r := h.do("GET", "/v1/peers", nil)
	if r.status != 500 || r.errMsg(t) != msgInjected {
		t.Errorf("error fault: %d %s", r.status, r.body)
	}
	id := h.sim.PeerIDOfHost("gd2-1")
	var e wireErrorResp
	r = h.do("POST", "/v1/peers/"+id, wirePeerEditReq{})
	r.decode(t, &e)
	if r.status != 500 || e.Errors[0].Code != 2 || e.Errors[0].Fields["peer-id"] != id || e.Errors[0].Fields["step"] == "" {
		t.Errorf("txn fault: %d %s", r.status, r.body)
	}
	if r := h.do("GET", "/v1/peers/"+id, nil); r.status != 409 || r.errMsg(t) != msgLock {
		t.Errorf("conflict fault: %d %s", r.status, r.body)
	}

	// A hang runs the operation but never answers; the client gives up.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", h.srv.URL+"/v1/peers", jsonBody(t, wirePeerAddReq{Addresses: []string{"hung"}}))
	tok, _ := Token(testSecret, "POST", "/v1/peers", h.clock.Now(), time.Minute)
	req.Header.Set("Authorization", "Bearer "+tok)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("hang answered %d", resp.StatusCode)
	}
	if h.sim.PeerIDOfHost("hung") == "" {
		t.Errorf("hung add should still have joined the peer")
	}

	// Latency waits on the injected clock.
	waiters := h.clock.Waiters()
	done := make(chan int)
	go func() {
		req, _ := http.NewRequest("GET", h.srv.URL+"/v1/volumes", nil)
		tok, _ := Token(testSecret, "GET", "/v1/volumes", h.clock.Now(), time.Hour)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- 0
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	deadline := time.Now().Add(5 * time.Second)
	for h.clock.Waiters() <= waiters {
		if time.Now().After(deadline) {
			t.Fatal("latency never waited on the clock")
		}
		time.Sleep(time.Millisecond)
	}
	h.clock.Step(time.Second)
	if code := <-done; code != 200 {
		t.Errorf("latency request: %d", code)
	}
}

func TestAdminLockGives409(t *testing.T) {
	h := newHarness(t, Config{Peers: 3, Zones: 3})
	h.registerAll()
	h.must(201, "POST", "/v1/volumes", wireVolCreateReq{Name: "v", Size: 1 << 30, Replica: 3})
	h.must(204, "POST", "/sim/locks/v", nil)
	if r := h.do("POST", "/v1/volumes/v/start", nil); r.status != 409 || r.errMsg(t) != msgLock {
		t.Errorf("locked start: %d %s", r.status, r.body)
	}
	h.must(204, "DELETE", "/sim/locks/v", nil)
	h.must(200, "POST", "/v1/volumes/v/start", nil)
}

// TestChaosProfileFailsOneRequestInFive: over many requests the chaos
// profile's decisions come close to its documented shares.
func TestChaosProfileFailsOneRequestInFive(t *testing.T) {
	f := ChaosFaults()
	if err := f.Validate(); err != nil {
		t.Fatal(err)
	}
	fi := newFaultInjector(7, f)
	const n = 20000
	counts := map[faultKind]int{}
	for range n {
		d := fi.decide("ReplaceBrick")
		if d.latency != 50*time.Millisecond {
			t.Fatalf("latency %s, want 50ms", d.latency)
		}
		counts[d.kind]++
	}
	for kind, want := range map[faultKind]float64{faultError: 0.10, faultConflict: 0.06, faultHang: 0.04, faultNone: 0.80} {
		if got := float64(counts[kind]) / n; got < want-0.01 || got > want+0.01 {
			t.Errorf("kind %d: share %.3f, want %.2f", kind, got, want)
		}
	}
}

// InjectedFaults counts every fault decided, by kind, and nothing for the
// requests that only got the latency.
func TestInjectedFaultsCountsByKind(t *testing.T) {
	s := &Simulator{faults: newFaultInjector(3, ChaosFaults())}
	want := map[string]int{}
	for range 1000 {
		if d := s.faults.decide("DeletePeer"); d.kind != faultNone {
			want[d.kind.String()]++
		}
	}
	got := s.InjectedFaults()
	if len(got) != 3 {
		t.Fatalf("InjectedFaults %v, want error, conflict and hang", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %d, want %d", k, got[k], v)
		}
	}
}
