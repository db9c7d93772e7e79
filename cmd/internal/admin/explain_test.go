package admin

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	anthillfake "github.com/gluster/anthill/kube/client/clientset/versioned/fake"
	"github.com/gluster/anthill/kube/machines"
	"github.com/gluster/anthill/states"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files of the explain tests")

func TestExplainGolden(t *testing.T) {
	at := func(m int) metav1.Time { return metav1.NewTime(t0.Add(time.Duration(m) * time.Minute)) }
	now := t0.Add(time.Hour)

	healthy := glusterCluster("ns", "gluster", "zone-1")
	healthy.Status.Phase = "Ready"
	healthy.Status.Volumes = []operatorv1alpha1.VolumeStatus{{Name: "vol1", State: "Healthy"}}
	healthy.Status.History = []operatorv1alpha1.TransitionRecord{{Time: at(1), From: "Provisioning", To: "Ready", Event: "provisioned", Reason: "NodesOnline"}}
	healthy.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: "True", Reason: "Steady", Message: "The cluster is ready."}}
	online := glusterNode("ns", "gluster-zone-1-a", "gluster")
	online.Status.State = "Online"

	drainingCluster := glusterCluster("ns", "gluster", "zone-1")
	drainingCluster.Status.Phase = "Ready"
	drainingCluster.Status.Volumes = []operatorv1alpha1.VolumeStatus{{Name: "vol2", State: "Healing", PendingEntries: 356, Message: "356 entries pending heal"}}
	drainingCluster.Status.Ledger = []operatorv1alpha1.LedgerEntry{{Time: at(20), Action: "replaceBrick", Node: "gluster-zone-2-b", Peer: "p2",
		Volume: "vol2", Brick: "/bricks/vol2/b1", TargetPeers: []string{"p5"}, State: "Draining", Reason: "MovingBrick", Cause: "DecommissionRequested"}}
	draining := glusterNode("ns", "gluster-zone-2-b", "gluster")
	draining.Status.State, draining.Status.LastTransitionTime = "Draining", ptrTime(at(10))
	draining.Status.Message = "replica set vol2-replicate-1 has no healed copy outside this node: pending 356 on gluster-zone-2-b"
	draining.Status.Conditions = []metav1.Condition{{Type: "Progressing", Status: "True", Reason: "WaitingForHeal", Message: draining.Status.Message}}
	draining.Status.History = []operatorv1alpha1.TransitionRecord{{Time: at(10), From: "Online", To: "Draining", Event: "decommission", Reason: "DecommissionRequested"}}

	blocked := glusterCluster("ns", "gluster", "zone-1")
	blocked.Status.Phase = "Upgrading"
	blocked.Status.Volumes = []operatorv1alpha1.VolumeStatus{{Name: "vol1", State: "SplitBrain", SplitBrainEntries: 2, Message: "2 entries in split-brain"}}
	blocked.Status.Upgrade = &operatorv1alpha1.UpgradeStatus{State: "Blocked", FromVersion: "4.1.0", ToVersion: "4.2.0", Message: "volume vol1 is in split-brain"}
	blocked.Status.History = []operatorv1alpha1.TransitionRecord{{Time: at(30), From: "Ready", To: "Upgrading", Event: "upgradeStarted", Reason: "VersionChanged"}}
	blocked.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: "False", Reason: "Upgrading", Message: "The upgrade machine is running."}}

	// Live decisions as machines.LiveClusterDecision returns them when GD2
	// answers, decided by states.DecideCluster over the facts it would
	// gather (that the live decision is the operator's own is tested in
	// kube/machines).
	liveCluster := func(snap states.ClusterSnapshot) *machines.LiveDecision {
		d := states.DecideCluster(snap)
		to := snap.State
		if d.Event != "" {
			to, _ = states.ClusterDefinition().Target(d.Event, snap.State)
		}
		return &machines.LiveDecision{Machine: states.ClusterMachine, State: snap.State, Decision: d, To: to, GD2: machines.LiveGD2Read}
	}
	healthyFacts := states.ClusterSnapshot{State: states.ClusterReady, GD2Reachable: true, InfraCreated: true, InfraReady: true, DesiredNodes: 1, NodesTotal: 1, NodesOnline: 1}
	steady := liveCluster(healthyFacts)
	lost := healthyFacts
	lost.NodesOnline, lost.NodesUnhealthy = 0, 1
	degrade := liveCluster(lost)
	upgrading := liveCluster(states.ClusterSnapshot{State: states.ClusterUpgrading, GD2Reachable: true, UpgradeActive: true, DesiredNodes: 1, NodesTotal: 1, NodesOnline: 1})

	for _, tc := range []struct {
		name    string
		objects []runtime.Object
		ref     string
		format  string
		// live is the live decision; nil takes it for real, over a
		// Kubernetes API that holds none of the cluster's objects (so no
		// auth Secret: GD2 cannot be read and the decision is unknown).
		live *machines.LiveDecision
	}{
		{"healthy-cluster", []runtime.Object{healthy, online}, "glustercluster/gluster", "text", steady},
		{"degrading-cluster", []runtime.Object{healthy, online}, "glustercluster/gluster", "text", degrade},
		{"waiting-drain", []runtime.Object{drainingCluster, draining}, "glusternode/gluster-zone-2-b", "text", nil},
		{"waiting-drain-cluster", []runtime.Object{drainingCluster, draining, online}, "gc/gluster", "text", nil},
		{"blocked-upgrade", []runtime.Object{blocked, online}, "glustercluster/gluster", "text", upgrading},
		{"blocked-upgrade-json", []runtime.Object{blocked, online}, "glustercluster/gluster", "json", upgrading},
		{"waiting-drain-json", []runtime.Object{drainingCluster, draining}, "glusternode/gluster-zone-2-b", "json", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ac := anthillfake.NewSimpleClientset(tc.objects...)
			e, err := explain(context.Background(), ac, "ns", tc.ref, 5)
			if err != nil {
				t.Fatal(err)
			}
			if tc.live != nil {
				e.Live = liveOf(states.ClusterDefinition(), *tc.live, nil)
			} else {
				e.Live = decideLive(context.Background(), machines.LiveReads{Kube: kubefake.NewClientset(), Anthill: ac, SyncTimeout: 10 * time.Second}, e)
			}
			var out bytes.Buffer
			if err := writeExplanation(&out, e, tc.format, now); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "explain-"+tc.name+".golden")
			if *updateGolden {
				if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./cmd/anthill -run TestExplainGolden -update)", err)
			}
			if !bytes.Equal(out.Bytes(), want) {
				t.Errorf("anthill explain %s differs from %s:\n%s", tc.ref, golden, out.String())
			}
		})
	}
}

func TestExplainRejectsWhatItCannotExplain(t *testing.T) {
	ac := anthillfake.NewSimpleClientset()
	for _, ref := range []string{"gluster", "pod/x", "glusternode/missing"} {
		if _, err := explain(context.Background(), ac, "ns", ref, 5); err == nil {
			t.Errorf("explain %q succeeded", ref)
		}
	}
}

func ptrTime(t metav1.Time) *metav1.Time { return &t }

// A cluster's explanation lists each automation its spec switches off,
// with the waits its machines persisted on it, and says so in the text.
func TestExplainListsWhatEachSwitchedOffAutomationHolds(t *testing.T) {
	c := glusterCluster("ns", "gluster", "zone-1")
	c.Spec.Automation = &operatorv1alpha1.AutomationSpec{TemplateRollouts: ptr.To(false), MarkFailed: ptr.To(false), ClusterOptions: ptr.To(true)}
	c.Status.Phase = "Ready"
	c.Status.Upgrade = &operatorv1alpha1.UpgradeStatus{State: "Idle",
		Message: "spec.automation.templateRollouts is false: not rolling 3 server(s) onto changed pod templates (CSI images changed: false) until it is set true."}
	n := *glusterNode("ns", "gluster-zone-1-0", "gluster")
	n.Status.State = "Offline"
	n.Status.Message = "spec.automation.lostPodEviction is false: not force-deleting the pod stuck on lost Kubernetes node w-1 until it is set true."
	e := explainCluster(c, []operatorv1alpha1.GlusterNode{n}, 0)
	want := []explainSwitch{
		{Field: "templateRollouts", Holding: []string{"upgrade Idle: " + c.Status.Upgrade.Message}},
		{Field: "markFailed"},
	}
	if !reflect.DeepEqual(e.SwitchedOff, want) {
		t.Fatalf("switched off %+v, want %+v", e.SwitchedOff, want)
	}
	var out bytes.Buffer
	if err := writeExplanation(&out, e, "text", t0); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"Switched off (spec.automation):",
		"  templateRollouts: holds upgrade Idle: spec.automation.templateRollouts is false",
		"  markFailed: holds nothing now",
	} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("explain does not say %q:\n%s", line, out.String())
		}
	}
}
