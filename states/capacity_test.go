package states

import (
	"reflect"
	"testing"
)

func TestCapacityCountsWhatCanTakeABrick(t *testing.T) {
	peers := []PeerFacts{
		{ID: "a", Zone: "z1", Online: true},
		{ID: "b", Zone: "z2", Online: true},
		{ID: "c", Zone: "z3", Online: false},
		// Drained into its draining zone: still sits in z1.
		{ID: "d", Zone: "z1-draining", HomeZone: "z1", Online: true},
	}
	devices := []CapacityDevice{
		{PeerID: "a", Enabled: true, Total: 100, Free: 60},
		{PeerID: "a", Enabled: false, Total: 50, Free: 50}, // disabled: no free space to offer
		{PeerID: "b", Enabled: true, Total: 100, Free: 10},
		{PeerID: "c", Enabled: true, Total: 100, Free: 100}, // dead peer
		{PeerID: "d", Enabled: true, Total: 20, Free: 5},
		{PeerID: "x", Enabled: true, Total: 999, Free: 999}, // another cluster's peer
	}
	total, zones := Capacity(peers, devices)
	if want := (ZoneCapacity{Total: 370, Free: 75}); total != want {
		t.Errorf("total %+v, want %+v", total, want)
	}
	want := []ZoneCapacity{{Zone: "z1", Total: 170, Free: 65}, {Zone: "z2", Total: 100, Free: 10}, {Zone: "z3", Total: 100}}
	if !reflect.DeepEqual(zones, want) {
		t.Errorf("zones %+v, want %+v", zones, want)
	}
}

func TestCapacityOfNoDevicesListsTheZonesEmpty(t *testing.T) {
	total, zones := Capacity([]PeerFacts{{ID: "a", Zone: "z1", Online: true}}, nil)
	if total != (ZoneCapacity{}) || !reflect.DeepEqual(zones, []ZoneCapacity{{Zone: "z1"}}) {
		t.Errorf("total %+v, zones %+v", total, zones)
	}
}

func TestCapacityByPeer(t *testing.T) {
	peers := []PeerFacts{{ID: "a", Online: true}, {ID: "b", Online: false}, {ID: "c", Online: true}}
	devices := []CapacityDevice{
		{PeerID: "a", Enabled: true, Total: 100, Free: 60},
		{PeerID: "a", Enabled: false, Total: 50, Free: 50},
		{PeerID: "b", Enabled: true, Total: 100, Free: 100},
		{PeerID: "c", Enabled: true, Total: 10, Free: 20}, // GD2's loop quirk: free over total
		{PeerID: "other", Enabled: true, Total: 100, Free: 100},
	}
	got := CapacityByPeer(peers, devices)
	want := map[string]PeerCapacity{
		"a": {Total: 150, Free: 60, Allocated: 40},
		"b": {Total: 100, Free: 0, Allocated: 0},
		"c": {Total: 10, Free: 20, Allocated: 0},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("CapacityByPeer = %+v, want %+v", got, want)
	}
}
