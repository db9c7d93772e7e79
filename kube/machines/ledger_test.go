package machines

import (
	"fmt"
	"testing"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
)

func move(node, brick string) operatorv1alpha1.LedgerEntry {
	return operatorv1alpha1.LedgerEntry{Action: operatorv1alpha1.LedgerActionReplaceBrick, Node: node, Volume: "v", Brick: brick}
}

func TestLedgerKeepsEachMoveOnceAndTheNewestHundred(t *testing.T) {
	var ledger []operatorv1alpha1.LedgerEntry
	for i := range operatorv1alpha1.MaxLedger + 5 {
		var changed bool
		ledger, changed = withLedgerEntries(ledger, []operatorv1alpha1.LedgerEntry{move("n", fmt.Sprint(i))})
		if !changed {
			t.Fatalf("entry %d was not added", i)
		}
	}
	if len(ledger) != operatorv1alpha1.MaxLedger || ledger[0].Brick != "5" || ledger[len(ledger)-1].Brick != "104" {
		t.Fatalf("ledger holds %d entries, %s to %s; want the newest %d", len(ledger), ledger[0].Brick, ledger[len(ledger)-1].Brick, operatorv1alpha1.MaxLedger)
	}
	recovered := move("n", "104")
	recovered.Recovered = true
	if _, changed := withLedgerEntries(ledger, []operatorv1alpha1.LedgerEntry{recovered}); changed {
		t.Error("a move already recorded was recorded again as recovered")
	}
	if _, changed := withLedgerEntries(ledger, []operatorv1alpha1.LedgerEntry{move("other", "104")}); !changed {
		t.Error("the same brick path moved off another node is another move")
	}
}
