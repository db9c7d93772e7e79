package upgrade

import (
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	anthillfake "github.com/gluster/anthill/kube/client/clientset/versioned/fake"
	"github.com/gluster/anthill/kube/effects"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/states"
)

// TestUpgradeSyncerLedgersClientRolls: the version a rollClients step
// rolls the CSI clients to goes on record before the action, once however
// often the step repeats; a later, different version is a new entry.
func TestUpgradeSyncerLedgersClientRolls(t *testing.T) {
	anthill := anthillfake.NewSimpleClientset()
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	us := &Syncer{Anthill: anthill, Kube: &effects.Kube{Client: kubefake.NewClientset(), Anthill: anthill}, Log: &engine.TransitionLog{Log: zap.NewNop(), Metrics: engine.NewMetrics()}, Clock: clk}
	c := &operatorv1alpha1.GlusterCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gc"}}
	roll := states.Decision{Step: states.UpgradeRollClients, Reason: "RollingClients"}
	for _, v := range []string{"4.2.0", "4.2.0", "4.3.0"} {
		us.RecordAhead(c, engine.Instance[*upgradeFacts]{State: states.UpgradeRollingClients, Facts: &upgradeFacts{snap: states.UpgradeSnapshot{ActiveTarget: v}}}, roll, states.UpgradeRollingClients, clk.Now())
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
