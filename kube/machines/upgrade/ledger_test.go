package upgrade

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/machines/machinestatus"
	"github.com/gluster/anthill/states"
)

// TestUpgradeSyncerLedgersClientRolls: the version a rollClients step
// rolls the CSI clients to goes on record before the action, once however
// often the step repeats; a later, different version is a new entry.
func TestUpgradeSyncerLedgersClientRolls(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	c := &operatorv1alpha1.GlusterCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gc"}}
	roll := states.Decision{Step: states.UpgradeRollClients, Reason: "RollingClients"}
	for _, v := range []string{"4.2.0", "4.2.0", "4.3.0"} {
		machinestatus.ClusterLedger{}.Note(c, states.UpgradeChanges(states.UpgradeSnapshot{State: states.UpgradeRollingClients, ActiveTarget: v}, roll), clk.Now())
	}
	var got []string
	for _, e := range c.Status.Ledger {
		got = append(got, e.Action+" "+e.Version+"@"+e.State+" "+e.Reason)
	}
	want := []string{"rollCSIDrivers 4.2.0@RollingClients RollingClients", "rollCSIDrivers 4.3.0@RollingClients RollingClients"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("ledger:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}
