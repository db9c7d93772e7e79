package upgrade

import (
	"slices"
	"testing"

	k8sfake "k8s.io/client-go/kubernetes/fake"

	"github.com/gluster/anthill/gd2/sim"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/effects"
	"github.com/gluster/anthill/kube/internal/fixtures"
	"github.com/gluster/anthill/states"
)

// A batch is back; the heal machine still records the volume Healing (its
// next look has not come). A live read that finds it healed lets the next
// batch go; one that finds a brick down does not.
func TestUpgradeSyncerReadsLiveTheVolumesNotYetRecordedHealthy(t *testing.T) {
	for _, tc := range []struct {
		name     string
		peerDown bool
		want     []string
	}{
		{"healed: the next batch is picked", false, []string{"n-a"}},
		{"a brick down: the batch waits", true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pool := fixtures.NewGD2Pool(t, sim.Config{}, nil)
			pool.CreateVolume(t, "data", 3)
			if tc.peerDown {
				if err := pool.Sim.SetHostAlive(pool.Peers[0].Name, false); err != nil {
					t.Fatal(err)
				}
			}
			f := newUpgradeFixture(t, func(c *operatorv1alpha1.GlusterCluster, _ []*operatorv1alpha1.GlusterNode) {
				c.Spec.Management = pool.Cluster().Spec.Management
				c.Status.Upgrade = &operatorv1alpha1.UpgradeStatus{State: string(states.UpgradeRollingServers), ToVersion: "4.1.1"}
				c.Status.Volumes = []operatorv1alpha1.VolumeStatus{{Name: "data", State: string(states.HealHealing)}}
			})
			secret := pool.AuthSecret()
			secret.Namespace = fixtures.Namespace
			f.syncer.GD2 = &effects.GD2Clients{Secrets: k8sfake.NewClientset(secret).CoreV1()}
			c := f.sync()
			if !slices.Equal(c.Status.Upgrade.CurrentNodes, tc.want) {
				t.Errorf("batch %v, want %v (%s)", c.Status.Upgrade.CurrentNodes, tc.want, c.Status.Upgrade.Message)
			}
		})
	}
}
