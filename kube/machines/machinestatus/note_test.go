package machinestatus

import (
	"fmt"
	"strings"
	"testing"
	"time"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/states"
)

// Changes as the ledger tests write them.
var (
	moveB1     = states.Change{Action: states.LedgerReplaceBrick, Node: "n", Volume: "v", Brick: "/b/1", TargetPeers: []string{"p"}}
	moveB1Else = states.Change{Action: states.LedgerReplaceBrick, Node: "n", Volume: "v", Brick: "/b/1", TargetPeers: []string{"q"}}
	moveB1Odd  = states.Change{Action: states.LedgerReplaceBrick, Node: "m", Volume: "v", Brick: "/b/1"}
	rollV2     = states.Change{Action: states.LedgerRollWorkload, Node: "n", Version: "v2"}
	rollV3     = states.Change{Action: states.LedgerRollWorkload, Node: "n", Version: "v3"}
	disableN   = states.Change{Action: states.LedgerDisableDevices, Node: "n"}
	disableM   = states.Change{Action: states.LedgerDisableDevices, Node: "m"}
	createZ1   = states.Change{Action: states.LedgerCreateNodes, Template: "z1", Count: 1}
	createZ2   = states.Change{Action: states.LedgerCreateNodes, Template: "z2", Count: 1}
	startOnN   = states.Change{Action: states.LedgerForceStartBricks, Node: "n", Peer: "p", Volume: "v"}
	startOnM   = states.Change{Action: states.LedgerForceStartBricks, Node: "m", Peer: "q", Volume: "v"}
	startOnN2  = states.Change{Action: states.LedgerForceStartBricks, Node: "n", Peer: "p", Volume: "w"}
)

func entryLine(e operatorv1alpha1.LedgerEntry) string {
	return strings.Join(strings.Fields(fmt.Sprintf("%s %s %s%s%s%s", e.Action, e.Node, e.Brick, e.Version, e.Template, e.Volume)), " ")
}

// TestLedgersNoteEachChangeOnce is the dedupe both ledgers keep, by
// table: before is what earlier syncs noted, one note each; then changes
// are noted once more. A brick moves once (its entry anywhere is it); a
// recurring change is on record when the node's latest entry is it; the
// cluster-wide entries of one change are one record, however many node
// entries come between.
func TestLedgersNoteEachChangeOnce(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cluster bool
		before  [][]states.Change
		changes []states.Change
		noted   bool
		want    string
	}{
		{"nothing to note", false, nil, nil, false, ""},
		{"a first move", false, nil, []states.Change{moveB1}, true, "replaceBrick n /b/1v"},
		{"a move's retry to other targets", false, [][]states.Change{{moveB1}, {rollV2}}, []states.Change{moveB1Else}, false,
			"replaceBrick n /b/1v|rollWorkload n v2"},
		{"the same brick path moved off another node", false, [][]states.Change{{moveB1}}, []states.Change{moveB1Odd}, true,
			"replaceBrick n /b/1v|replaceBrick m /b/1v"},
		{"a restart repeated", false, [][]states.Change{{rollV2}}, []states.Change{rollV2}, false, "rollWorkload n v2"},
		{"a restart repeated after another node's entry", false, [][]states.Change{{rollV2}, {disableM}}, []states.Change{rollV2}, false,
			"rollWorkload n v2|disableDevices m"},
		{"a restart at the version before the node's latest entry", false, [][]states.Change{{rollV2}, {rollV3}}, []states.Change{rollV2}, true,
			"rollWorkload n v2|rollWorkload n v3|rollWorkload n v2"},
		{"a disable after the roll", false, [][]states.Change{{rollV2}}, []states.Change{disableN}, true, "rollWorkload n v2|disableDevices n"},
		{"a cluster-wide change of two entries", true, nil, []states.Change{createZ1, createZ2}, true, "createNodes z1|createNodes z2"},
		{"written again with a node entry between", true, [][]states.Change{{createZ1, createZ2}, {disableN}}, []states.Change{createZ1, createZ2}, false,
			"createNodes z1|createNodes z2|disableDevices n"},
		{"its last part written again", true, [][]states.Change{{createZ1, createZ2}}, []states.Change{createZ2}, false, "createNodes z1|createNodes z2"},
		{"its first part again is a new change", true, [][]states.Change{{createZ1, createZ2}}, []states.Change{createZ1}, true,
			"createNodes z1|createNodes z2|createNodes z1"},
		{"bricks started on two nodes, one already on record", true, [][]states.Change{{startOnN}}, []states.Change{startOnN, startOnM}, true,
			"forceStartBricks n v|forceStartBricks m v"},
		{"another volume's bricks on the same node", true, [][]states.Change{{startOnN}}, []states.Change{startOnN2}, true,
			"forceStartBricks n v|forceStartBricks n w"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
			node, c := &operatorv1alpha1.GlusterNode{}, &operatorv1alpha1.GlusterCluster{}
			note := func(changes []states.Change) bool {
				if tc.cluster {
					return ClusterLedger{}.Note(c, changes, now)
				}
				return NodeLedger{}.Note(node, changes, now)
			}
			for _, b := range tc.before {
				if !note(b) {
					t.Fatalf("setting up: %+v was not noted", b)
				}
			}
			if got := note(tc.changes); got != tc.noted {
				t.Errorf("noted %t, want %t", got, tc.noted)
			}
			ledger := node.Status.Ledger
			if tc.cluster {
				ledger = c.Status.Ledger
			}
			var lines []string
			for _, e := range ledger {
				if !e.Time.Time.Equal(now) {
					t.Errorf("entry %+v is not stamped with the time it was noted", e)
				}
				lines = append(lines, entryLine(e))
			}
			if got := strings.Join(lines, "|"); got != tc.want {
				t.Errorf("ledger %q, want %q", got, tc.want)
			}
		})
	}
}

// Each ledger keeps its newest entries, and an entry names at most
// MaxLedgerItems objects and options, as the API bounds them.
func TestLedgersAreBounded(t *testing.T) {
	node, c := &operatorv1alpha1.GlusterNode{}, &operatorv1alpha1.GlusterCluster{}
	for i := range operatorv1alpha1.MaxLedger + 3 {
		move := states.Change{Action: states.LedgerReplaceBrick, Node: "n", Volume: "v", Brick: fmt.Sprint(i)}
		NodeLedger{}.Note(node, []states.Change{move}, time.Time{})
		ClusterLedger{}.Note(c, []states.Change{move}, time.Time{})
	}
	if l := node.Status.Ledger; len(l) != operatorv1alpha1.MaxNodeLedger || l[len(l)-1].Brick != fmt.Sprint(operatorv1alpha1.MaxLedger+2) {
		t.Errorf("the node's ledger holds %d entries, want its newest %d", len(l), operatorv1alpha1.MaxNodeLedger)
	}
	if l := c.Status.Ledger; len(l) != operatorv1alpha1.MaxLedger || l[0].Brick != "3" {
		t.Errorf("the cluster's ledger holds %d entries from %s, want its newest %d", len(l), l[0].Brick, operatorv1alpha1.MaxLedger)
	}
	many := make([]string, MaxLedgerItems+5)
	for i := range many {
		many[i] = fmt.Sprint(i)
	}
	e := LedgerEntries([]states.Change{{Action: states.LedgerEnsureCSIDrivers, Objects: many, Options: many, TargetPeers: []string{"p"}}}, time.Time{})[0]
	if len(e.Objects) != MaxLedgerItems || len(e.Options) != MaxLedgerItems || len(e.TargetPeers) != 1 {
		t.Errorf("an entry names %d objects and %d options, want %d each", len(e.Objects), len(e.Options), MaxLedgerItems)
	}
}
