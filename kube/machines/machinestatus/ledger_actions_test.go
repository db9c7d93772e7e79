package machinestatus

import (
	"slices"
	"testing"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/states"
)

// The ledger actions states classifies the machines' actions by are the
// ones the API documents to admins, and each is recorded by some action.
func TestTheLedgerActionsAreTheAPIs(t *testing.T) {
	api := map[string]string{
		states.LedgerReplaceBrick:      operatorv1alpha1.LedgerActionReplaceBrick,
		states.LedgerHealReplacement:   operatorv1alpha1.LedgerActionHealReplacement,
		states.LedgerDeletePeer:        operatorv1alpha1.LedgerActionDeletePeer,
		states.LedgerDeleteWorkload:    operatorv1alpha1.LedgerActionDeleteWorkload,
		states.LedgerRollWorkload:      operatorv1alpha1.LedgerActionRollWorkload,
		states.LedgerDisableDevices:    operatorv1alpha1.LedgerActionDisableDevices,
		states.LedgerEnableDevices:     operatorv1alpha1.LedgerActionEnableDevices,
		states.LedgerEvictLostPod:      operatorv1alpha1.LedgerActionEvictLostPod,
		states.LedgerCreateNodes:       operatorv1alpha1.LedgerActionCreateNodes,
		states.LedgerDecommissionNode:  operatorv1alpha1.LedgerActionDecommissionNode,
		states.LedgerEnsureCSIDrivers:  operatorv1alpha1.LedgerActionEnsureCSIDrivers,
		states.LedgerRollCSIDrivers:    operatorv1alpha1.LedgerActionRollCSIDrivers,
		states.LedgerSetClusterOptions: operatorv1alpha1.LedgerActionSetClusterOptions,
		states.LedgerForceStartBricks:  operatorv1alpha1.LedgerActionForceStartBricks,
	}
	for s, a := range api {
		if s != a {
			t.Errorf("states records %q where the API says %q", s, a)
		}
	}
	var used []string
	for machine, names := range states.Classified() {
		for _, name := range names {
			r, _ := states.RecordOf(machine, name)
			for _, l := range r.Ledger {
				if _, ok := api[l]; !ok {
					t.Errorf("%s %s is recorded as %q, which the API does not name", machine, name, l)
				}
				used = append(used, l)
			}
		}
	}
	for l := range api {
		if !slices.Contains(used, l) {
			t.Errorf("no action is recorded as %q", l)
		}
	}
}
