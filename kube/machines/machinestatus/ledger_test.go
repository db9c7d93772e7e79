package machinestatus

import (
	"fmt"
	"testing"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/internal/fixtures"
)

func TestLedgerKeepsEachMoveOnceAndTheNewestHundred(t *testing.T) {
	var ledger []operatorv1alpha1.LedgerEntry
	for i := range operatorv1alpha1.MaxLedger + 5 {
		var changed bool
		ledger, changed = withLedgerEntries(ledger, []operatorv1alpha1.LedgerEntry{fixtures.LedgerMove("n", fmt.Sprint(i))}, operatorv1alpha1.MaxLedger)
		if !changed {
			t.Fatalf("entry %d was not added", i)
		}
	}
	if len(ledger) != operatorv1alpha1.MaxLedger || ledger[0].Brick != "5" || ledger[len(ledger)-1].Brick != "104" {
		t.Fatalf("ledger holds %d entries, %s to %s; want the newest %d", len(ledger), ledger[0].Brick, ledger[len(ledger)-1].Brick, operatorv1alpha1.MaxLedger)
	}
	again := fixtures.LedgerMove("n", "104")
	again.TargetPeers = []string{"peer-x"}
	if _, changed := withLedgerEntries(ledger, []operatorv1alpha1.LedgerEntry{again}, operatorv1alpha1.MaxLedger); changed {
		t.Error("a move already recorded was recorded again")
	}
	if _, changed := withLedgerEntries(ledger, []operatorv1alpha1.LedgerEntry{fixtures.LedgerMove("other", "104")}, operatorv1alpha1.MaxLedger); !changed {
		t.Error("the same brick path moved off another node is another move")
	}
}

// TestLedgerKeepsAClusterWideChangeOnce: the entries of one cluster-wide
// change (several templates scaled in one step) are one record: written
// again, as a retry does, they add nothing, even with node entries in
// between; a different change is new.
func TestLedgerKeepsAClusterWideChangeOnce(t *testing.T) {
	a := operatorv1alpha1.LedgerEntry{Action: operatorv1alpha1.LedgerActionCreateNodes, Template: "z1", Count: 1}
	b := operatorv1alpha1.LedgerEntry{Action: operatorv1alpha1.LedgerActionCreateNodes, Template: "z2", Count: 1}
	ledger, changed := withLedgerEntries(nil, []operatorv1alpha1.LedgerEntry{a, b}, operatorv1alpha1.MaxLedger)
	if !changed || len(ledger) != 2 {
		t.Fatalf("first write: %+v", ledger)
	}
	ledger, _ = withLedgerEntries(ledger, []operatorv1alpha1.LedgerEntry{{Action: operatorv1alpha1.LedgerActionDisableDevices, Node: "n"}}, operatorv1alpha1.MaxLedger)
	if _, changed := withLedgerEntries(ledger, []operatorv1alpha1.LedgerEntry{a, b}, operatorv1alpha1.MaxLedger); changed {
		t.Error("the same change written again was recorded twice")
	}
	if _, changed := withLedgerEntries(ledger, []operatorv1alpha1.LedgerEntry{b}, operatorv1alpha1.MaxLedger); changed {
		t.Error("the last part of the same change written again was recorded twice")
	}
	if _, changed := withLedgerEntries(ledger, []operatorv1alpha1.LedgerEntry{a}, operatorv1alpha1.MaxLedger); !changed {
		t.Error("scaling z1 again after z2 is a new change")
	}
}
