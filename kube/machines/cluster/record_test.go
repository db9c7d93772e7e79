package cluster

import (
	"context"
	"errors"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/kube/machines/machinestatus"
	"github.com/gluster/anthill/states"
)

// TestClusterRecordLandsTheOutcome: Record copies the nodes' new ledger
// entries whatever happened, and lands a transition in the phase, the
// history, the counts and the phase conditions; a failed action changes
// nothing else. Finish looks again at a wait after PollWait at the
// latest, sooner when the autoscaler's cooldown ends first.
func TestClusterRecordLandsTheOutcome(t *testing.T) {
	cs, _ := clusterLedgerFixture(t, 1, "gc-z1-a")
	now := cs.Clock.Now()
	c := &operatorv1alpha1.GlusterCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gc", Generation: 3}}
	copied := operatorv1alpha1.LedgerEntry{Action: operatorv1alpha1.LedgerActionDisableDevices, Node: "gc-z1-a"}
	facts := &clusterFacts{snap: states.ClusterSnapshot{State: states.ClusterProvisioning, DesiredNodes: 1, NodesTotal: 1, NodesOnline: 1}, nodeLedger: []operatorv1alpha1.LedgerEntry{copied}}

	failed := []engine.Outcome[*clusterFacts]{{Instance: engine.Instance[*clusterFacts]{State: states.ClusterProvisioning, Facts: facts}, Kind: engine.Failed, To: states.ClusterProvisioning, Err: errors.New("injected")}}
	cs.Record(c, failed, now)
	if len(c.Status.Ledger) != 1 || c.Status.Phase != "" || len(c.Status.History) != 0 {
		t.Fatalf("after a failed action: %+v", c.Status)
	}

	d := cs.Decide(engine.Instance[*clusterFacts]{Facts: facts})
	fired := []engine.Outcome[*clusterFacts]{{
		Instance: engine.Instance[*clusterFacts]{State: states.ClusterProvisioning, Facts: &clusterFacts{snap: facts.snap}},
		Kind:     engine.Fired, Decision: d, To: states.ClusterReady,
		Committed: &engine.Committed{Machine: states.ClusterMachine, From: states.ClusterProvisioning, To: states.ClusterReady, Event: d.Event, Reason: d.Reason, Time: now},
	}}
	cs.Record(c, fired, now)
	ready := apimeta.FindStatusCondition(c.Status.Conditions, operatorv1alpha1.ConditionReady)
	if c.Status.Phase != operatorv1alpha1.ClusterPhase(states.ClusterReady) || len(c.Status.History) != 1 || c.Status.Nodes.Online != 1 ||
		c.Status.ObservedGeneration != 3 || ready == nil || ready.Status != metav1.ConditionTrue || len(c.Status.Ledger) != 1 {
		t.Fatalf("after %s fired: %+v", d.Event, c.Status)
	}
	if lt := lastTransition(c.Status.History); lt == nil || !lt.Time.Equal(now) {
		t.Errorf("the cluster's last transition is %v, want %v", lt, now)
	}

	waited := []engine.Outcome[*clusterFacts]{{Instance: engine.Instance[*clusterFacts]{Facts: &clusterFacts{}}, Kind: engine.Waited}}
	if res, err := cs.Finish(context.Background(), c, waited, engine.Result{}, nil); err != nil || res.RequeueAfter != machinestatus.PollWait {
		t.Errorf("a wait finishes with %+v, %v; want a look again after %s", res, err, machinestatus.PollWait)
	}
	waited[0].Facts.autoscale.RetryAt = now.Add(5 * time.Second)
	if res, _ := cs.Finish(context.Background(), c, waited, engine.Result{}, nil); res.RequeueAfter != 5*time.Second {
		t.Errorf("a wait held by the cooldown finishes with %+v, want a look again when it ends", res)
	}
	if needed, read, _ := cs.LiveGD2(states.ClusterPending, &clusterFacts{}); needed || read {
		t.Errorf("a pending cluster's decision needs GD2: %t, %t", needed, read)
	}
}
