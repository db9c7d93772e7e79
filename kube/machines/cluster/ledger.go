package cluster

import (
	"slices"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/machines/machinestatus"
)

// copyNodeLedgers is what the ledgers of cluster's GlusterNodes among
// nodes hold that its ledger does not yet, oldest first (a stable order
// across nodes).
func copyNodeLedgers(ledger []operatorv1alpha1.LedgerEntry, cluster string, nodes []*operatorv1alpha1.GlusterNode) []operatorv1alpha1.LedgerEntry {
	var out []operatorv1alpha1.LedgerEntry
	for _, n := range nodes {
		if n.Spec.Cluster != cluster {
			continue
		}
		out = append(out, machinestatus.LedgerToCopy(ledger, n.Name, n.Status.Ledger)...)
	}
	slices.SortStableFunc(out, func(a, b operatorv1alpha1.LedgerEntry) int { return a.Time.Compare(b.Time.Time) })
	return out
}
