package sim

import (
	"sort"
	"testing"
	"time"
)

func TestHealTriggerFailsPerBrickNodeWhileTheDaemonKeepsCrawling(t *testing.T) {
	h, v := healSetup(t, Config{WriteRate: 10, HealRate: 5})
	h.must(200, "POST", "/v1/volumes/v/options", wireVolOptionReq{Options: map[string]string{optSelfHeal: "on"}, AllowAdvancedOptions: true})
	down := v.Subvols[0].Bricks[2].PeerID
	if err := h.sim.SetPeerAlive(down, false); err != nil {
		t.Fatal(err)
	}
	h.clock.Step(10 * time.Second) // 100 entries behind
	if err := h.sim.SetPeerAlive(down, true); err != nil {
		t.Fatal(err)
	}
	if err := h.sim.SetFaults(Faults{HealTriggerFailRate: 1}); err != nil {
		t.Fatal(err)
	}
	r := h.do("POST", "/v1/volumes/v/heal", nil)
	var e wireErrorResp
	r.decode(t, &e)
	if r.status != 500 || len(e.Errors) != 3 {
		t.Fatalf("heal trigger with the daemon RPC failing: %d %s, want 500 with one error per brick node", r.status, r.body)
	}
	var got, want []string
	for _, it := range e.Errors {
		if it.Code != 2 || it.Message != msgTxnStep || it.Fields["step"] != stepSelfHeal || it.Fields["error"] != msgShdRPC {
			t.Errorf("error item %+v, want code 2 at %s", it, stepSelfHeal)
		}
		got = append(got, it.Fields["peer-id"])
	}
	for _, b := range v.Subvols[0].Bricks {
		want = append(want, b.PeerID)
	}
	sort.Strings(got)
	sort.Strings(want)
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("failing peers %v, want the brick nodes %v", got, want)
	}
	if n := h.sim.InjectedFaults()["shd-rpc"]; n != 1 {
		t.Errorf("%d shd-rpc faults counted, want 1", n)
	}
	// The daemons crawl regardless: the backlog drains as without a trigger.
	h.clock.Step(time.Minute)
	for _, b := range h.healSummary() {
		if *b.EntriesInHealPending != 0 {
			t.Errorf("brick %s still has %d pending after the crawl", b.Name, *b.EntriesInHealPending)
		}
	}
	// The fault answers only heal triggers.
	h.must(200, "GET", "/v1/volumes/v", nil)
	if err := h.sim.SetFaults(Faults{}); err != nil {
		t.Fatal(err)
	}
	h.must(200, "POST", "/v1/volumes/v/heal", nil)
}

func TestHealTriggerFailRateIsValidatedWithTheOtherRates(t *testing.T) {
	tests := []struct {
		name string
		f    Faults
		ok   bool
	}{
		{"a rate of one alone is accepted", Faults{HealTriggerFailRate: 1}, true},
		{"a negative rate is refused", Faults{HealTriggerFailRate: -0.1}, false},
		{"rates that sum past one for SelfHeal are refused", Faults{ErrorRate: 0.5, HealTriggerFailRate: 0.6}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.f.Validate(); (err == nil) != tt.ok {
				t.Fatalf("Validate(%+v) = %v, want ok=%v", tt.f, err, tt.ok)
			}
		})
	}
}
