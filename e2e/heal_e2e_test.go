//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gluster/anthill/e2e/framework"
)

// TestHealVolumeShowsHealthy: a replicated volume created in GD2 appears in
// GlusterCluster.status.volumes and its heal machine reaches Healthy, with
// the transition in the cluster's history.
func TestHealVolumeShowsHealthy(t *testing.T) {
	sideBySide(t)
	ns := newNamespace(t)
	const name = "heal"
	createCluster(t, ns, name, 1)
	g := gd2Client(t)
	waitNodes(t, ns, name, 3, 3*time.Minute)
	createReplicatedVolume(t, g, "healvol")

	err := framework.WaitFor(context.Background(), 2*time.Minute, func(ctx context.Context) (bool, error) {
		c, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, v := range c.Status.Volumes {
			if v.Name != "healvol" {
				continue
			}
			if v.State != "Healthy" {
				return false, fmt.Errorf("volume healvol is %s: %s", v.State, v.Message)
			}
			for _, h := range c.Status.History {
				if h.Machine == "heal" && h.Subject == "healvol" && h.To == "Healthy" {
					return true, nil
				}
			}
			return false, fmt.Errorf("volume healvol is Healthy but its transition is not in the history: %+v", c.Status.History)
		}
		return false, fmt.Errorf("volume healvol is not in status.volumes: %+v", c.Status.Volumes)
	})
	if err != nil {
		dumpNamespace(t, ns)
		t.Fatalf("waiting for volume healvol to be Healthy: %v", err)
	}
	noViolations(t)
}
