package machinestatus

import (
	"slices"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/states"
)

// AppendHealHistory appends a heal record to the cluster's history, which
// it shares with the cluster machine. When the window is full it drops the
// oldest heal record first, so the cluster machine's latest transition
// (from which it times its phase) is never pushed out by heal churn.
func AppendHealHistory(h []operatorv1alpha1.TransitionRecord, r operatorv1alpha1.TransitionRecord) []operatorv1alpha1.TransitionRecord {
	h = append(slices.Clone(h), r)
	for len(h) > operatorv1alpha1.MaxHistory {
		keep := -1
		for i := len(h) - 1; i >= 0; i-- {
			if h[i].Machine == "" || h[i].Machine == states.ClusterMachine {
				keep = i
				break
			}
		}
		drop := 0
		if keep == 0 {
			drop = 1
		}
		h = slices.Delete(h, drop, drop+1)
	}
	return h
}
