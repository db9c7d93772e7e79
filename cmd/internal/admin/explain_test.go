package admin

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	anthillfake "github.com/gluster/anthill/kube/client/clientset/versioned/fake"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files of the explain tests")

func TestExplainGolden(t *testing.T) {
	at := func(m int) metav1.Time { return metav1.NewTime(t0.Add(time.Duration(m) * time.Minute)) }
	now := t0.Add(time.Hour)

	healthy := glusterCluster("ns", "gluster", "zone-1")
	healthy.Status.Phase = "Ready"
	healthy.Status.Volumes = []operatorv1alpha1.VolumeStatus{{Name: "vol1", State: "Healthy"}}
	healthy.Status.History = []operatorv1alpha1.TransitionRecord{{Time: at(1), From: "Provisioning", To: "Ready", Event: "provisioned", Reason: "NodesOnline"}}
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

	for _, tc := range []struct {
		name    string
		objects []runtime.Object
		ref     string
		format  string
	}{
		{"healthy-cluster", []runtime.Object{healthy, online}, "glustercluster/gluster", "text"},
		{"waiting-drain", []runtime.Object{drainingCluster, draining}, "glusternode/gluster-zone-2-b", "text"},
		{"waiting-drain-cluster", []runtime.Object{drainingCluster, draining, online}, "gc/gluster", "text"},
		{"blocked-upgrade", []runtime.Object{blocked, online}, "glustercluster/gluster", "text"},
		{"blocked-upgrade-json", []runtime.Object{blocked, online}, "glustercluster/gluster", "json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ac := anthillfake.NewSimpleClientset(tc.objects...)
			e, err := explain(context.Background(), ac, "ns", tc.ref, 5)
			if err != nil {
				t.Fatal(err)
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
