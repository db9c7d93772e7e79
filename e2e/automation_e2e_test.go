//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/gluster/anthill/e2e/framework"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/states"
)

// waitExplain waits until kubectl gluster explain of obj prints every one
// of want.
func waitExplain(t *testing.T, ns, obj string, timeout time.Duration, want ...string) string {
	t.Helper()
	var out string
	waitChecked(context.Background(), t, ns, "kubectl gluster explain "+obj+" saying "+strings.Join(want, "; "), timeout, func(ctx context.Context) error {
		o, errOut, err := runPlugin(ctx, t, ns, "explain", obj, "--live=false")
		if err != nil {
			return fmt.Errorf("explain: %v: %s", err, errOut)
		}
		out = o
		for _, w := range want {
			if !strings.Contains(o, w) {
				return fmt.Errorf("explain does not say %q:\n%s", w, o)
			}
		}
		return nil
	})
	return out
}

// TestEachAutomationSwitchesOff: three of spec.automation's switches on
// one cluster, each holding its own change with reason AutomationOff, as
// kubectl gluster explain shows, and letting it go once set true:
// clusterOptions holds an option GD2 does not have, templateRollouts
// holds the rollout of a changed image, and markFailed keeps a node down
// past its permissible downtime Offline. The other switches hold in the
// same way (TestEverySwitchHoldsItsChangeAlone, states).
func TestEachAutomationSwitchesOff(t *testing.T) {
	sideBySide(t)
	ns := newNamespace(t)
	const name = "switches"
	const option = "cluster.localtime-logging"
	createClusterEdited(t, ns, name, 1, defaultSimOptions, func(c *operatorv1alpha1.GlusterCluster) {
		c.Spec.Automation = &operatorv1alpha1.AutomationSpec{ClusterOptions: ptr.To(false), TemplateRollouts: ptr.To(false), MarkFailed: ptr.To(false)}
		c.Spec.ClusterOptions = map[string]string{option: "on"}
		c.Spec.FailurePolicy = &operatorv1alpha1.FailurePolicy{
			PermissibleDowntime: &metav1.Duration{Duration: 5 * time.Second},
			OfflineGrace:        &metav1.Duration{Duration: 0},
			RecoveryWindow:      &metav1.Duration{Duration: 0},
		}
	})
	nodes := waitNodes(t, ns, name, 3, 3*time.Minute)
	g := gd2Client(t)
	ctx := context.Background()
	c, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a := c.Spec.Automation; !ptr.Deref(a.DisruptionBudgets, false) || !ptr.Deref(a.LostPodEviction, false) || !ptr.Deref(a.ForceStartBricks, false) {
		t.Fatalf("the switches left unset are not defaulted true: %+v", a)
	}

	t.Log("clusterOptions off: the option is not set in GD2")
	waitExplain(t, ns, "glustercluster/"+name, 2*time.Minute,
		"Switched off (spec.automation):",
		"clusterOptions: holds glustercluster/"+name+" Ready: spec.automation.clusterOptions is false: not setting cluster option(s) "+option+" in GD2",
		"templateRollouts: holds nothing now", "markFailed: holds nothing now")
	opts, err := g.ClusterOptions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range opts {
		if o.Key == option && o.Value == "on" {
			t.Fatalf("%s was set in GD2 with spec.automation.clusterOptions false", option)
		}
	}

	t.Log("templateRollouts off: a changed image rolls no server")
	revisions := map[string]string{}
	for n, node := range nodes {
		revisions[n] = node.Status.Revision
	}
	editCluster(t, ns, name, func(c *operatorv1alpha1.GlusterCluster) { c.Spec.Gluster.Image = "registry.invalid/gluster/glusterd2" })
	waitExplain(t, ns, "glustercluster/"+name, 2*time.Minute,
		"templateRollouts: holds upgrade Idle: spec.automation.templateRollouts is false: not rolling 3 server(s) onto changed pod templates")
	for n, want := range revisions {
		got, err := anthill.OperatorV1alpha1().GlusterNodes(ns).Get(ctx, n, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status.Revision != want || got.Status.State != string(states.NodeOnline) {
			t.Fatalf("node %s rolled with template rollouts off: %s at revision %s, was %s", n, got.Status.State, got.Status.Revision, want)
		}
	}

	t.Log("markFailed off: a node down past its permissible downtime stays Offline")
	victim := ""
	for n := range nodes {
		if victim == "" || n < victim {
			victim = n
		}
	}
	peer := nodes[victim].Status.PeerID
	partition(t, peer, true)
	waitExplain(t, ns, "glusternode/"+victim, 2*time.Minute,
		"State:     Offline", "AutomationOff", "spec.automation.markFailed is false: not marking the node Failed")
	waitExplain(t, ns, "glustercluster/"+name, time.Minute,
		"markFailed: holds glusternode/"+victim+" Offline: spec.automation.markFailed is false")

	t.Log("every switch on: each held change goes on")
	editCluster(t, ns, name, func(c *operatorv1alpha1.GlusterCluster) { c.Spec.Automation = nil })
	waitChecked(ctx, t, ns, "the node marked Failed", 2*time.Minute, func(ctx context.Context) error {
		n, err := anthill.OperatorV1alpha1().GlusterNodes(ns).Get(ctx, victim, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if n.Status.State != string(states.NodeFailed) {
			return fmt.Errorf("node %s is %s: %s", victim, n.Status.State, n.Status.Message)
		}
		return nil
	})
	// GD2 sets options only with every peer alive (fact sheet §3).
	partition(t, peer, false)
	waitClusterOption(t, g, option, "on", 2*time.Minute)
	waitChecked(ctx, t, ns, "the rollout of the changed image", 5*time.Minute, func(ctx context.Context) error {
		ns, err := framework.ClusterNodes(ctx, anthill, ns, name)
		if err != nil {
			return err
		}
		for _, n := range ns {
			if n.Status.Revision == revisions[n.Name] || n.Status.State != string(states.NodeOnline) {
				return fmt.Errorf("node %s is %s at revision %s", n.Name, n.Status.State, n.Status.Revision)
			}
		}
		return nil
	})
}
