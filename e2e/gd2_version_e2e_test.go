//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gluster/anthill/e2e/framework"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/states"
)

// waitGD2Versions waits until every GlusterNode of cluster reports
// reported in status.gd2Version with its VersionMatches condition of
// reason.
func waitGD2Versions(t *testing.T, ns, cluster, reported, reason string, timeout time.Duration) {
	t.Helper()
	waitChecked(context.Background(), t, ns, fmt.Sprintf("every node's GD2 reporting %s (%s)", reported, reason), timeout, func(ctx context.Context) error {
		nodes, err := framework.ClusterNodes(ctx, anthill, ns, cluster)
		if err != nil {
			return err
		}
		for _, n := range nodes {
			r := n.Status.GD2Version
			c := apimeta.FindStatusCondition(n.Status.Conditions, operatorv1alpha1.ConditionVersionMatches)
			switch {
			case r == nil:
				return fmt.Errorf("node %s: no GD2 version read yet", n.Name)
			case r.Reported != reported:
				return fmt.Errorf("node %s: GD2 reports %q, want %q", n.Name, r.Reported, reported)
			case c == nil || c.Reason != reason:
				return fmt.Errorf("node %s: VersionMatches %v, want reason %s", n.Name, c, reason)
			}
		}
		return nil
	})
}

// TestGD2VersionRecordedPerNode: each node's GD2 is asked its version at
// GET /version, which the simulator answers as GD2 does, with the build
// its pod's image runs (docs/gd2sim.md). On the pinned default image,
// which names no release, GD2 reports the nightly build's own version
// (here the simulator's v6.0-sim), not spec.gluster.version: every node's
// VersionMatches condition is False (VersionMismatch) and kubectl gluster
// status names the mismatch per node. Naming an untagged image of one's
// own rolls the nodes onto image:4.1.0, a build of the release's tag, and
// every node reports v4.1.0-0 with VersionMatches True.
func TestGD2VersionRecordedPerNode(t *testing.T) {
	sideBySide(t)
	ns := newNamespace(t)
	const name = "versions"
	o := defaultSimOptions
	o.Version = "v6.0-sim"
	c := createClusterWithSim(t, ns, name, 1, o)
	if c.Spec.Gluster == nil || c.Spec.Gluster.Image != "" || c.Spec.Gluster.Version != "4.1.0" {
		t.Fatalf("the sample cluster runs %+v; this test wants the pinned image at 4.1.0", c.Spec.Gluster)
	}
	waitNodes(t, ns, name, 3, 3*time.Minute)
	waitGD2Versions(t, ns, name, "v6.0-sim", states.ReasonVersionMismatch, 2*time.Minute)

	ctx := context.Background()
	out, errOut, err := runPlugin(ctx, t, ns, "status", name)
	if err != nil {
		t.Fatalf("kubectl gluster status: %v\n%s%s", err, out, errOut)
	}
	for _, want := range []string{"GD2 VERSION", "v6.0-sim (not 4.1.0)", "VersionMismatch on 3 of 3:"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl gluster status does not show %q:\n%s", want, out)
		}
	}

	editCluster(t, ns, name, func(c *operatorv1alpha1.GlusterCluster) { c.Spec.Gluster.Image = "registry.invalid/gluster/glusterd2" })
	waitGD2Versions(t, ns, name, "v4.1.0-0", states.ReasonVersionMatches, 5*time.Minute)
	nodes, err := framework.ClusterNodes(ctx, anthill, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if c := apimeta.FindStatusCondition(n.Status.Conditions, operatorv1alpha1.ConditionVersionMatches); c.Status != metav1.ConditionTrue || n.Status.Version != "4.1.0" {
			t.Errorf("node %s: VersionMatches %s at recorded version %s, want True at 4.1.0", n.Name, c.Status, n.Status.Version)
		}
	}
	out, _, err = runPlugin(ctx, t, ns, "status", name)
	if err != nil || !strings.Contains(out, "v4.1.0-0") || strings.Contains(out, "VersionMismatch") {
		t.Errorf("kubectl gluster status after the rollout (%v):\n%s", err, out)
	}
}
