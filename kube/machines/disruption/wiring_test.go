package disruption

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/engine"
)

// A node's new message does not wake the disruption machine, nor a
// cluster update that changed nothing it reads; a node's new state and a
// volume's heal state do.
func TestUpdateKeysSkipANodesMessage(t *testing.T) {
	want := []engine.Key{disruptionKey("ns", "gc")}
	n := &operatorv1alpha1.GlusterNode{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "n1", ResourceVersion: "1"},
		Spec: operatorv1alpha1.GlusterNodeSpec{Cluster: "gc"}, Status: operatorv1alpha1.GlusterNodeStatus{State: "HealWait", Message: "9 entries are pending heal."}}
	said := n.DeepCopy()
	said.ResourceVersion, said.Status.Message = "2", "3 entries are pending heal."
	if got := UpdateKeys(n, said); got != nil {
		t.Errorf("a node's new message woke %v", got)
	}
	moved := said.DeepCopy()
	moved.ResourceVersion, moved.Status.State = "3", "Online"
	if got := UpdateKeys(said, moved); !slices.Equal(got, want) {
		t.Errorf("a node's transition woke %v, want %v", got, want)
	}
	if got := UpdateKeys(nil, n); !slices.Equal(got, want) {
		t.Errorf("a node's add woke %v, want %v", got, want)
	}
	c := &operatorv1alpha1.GlusterCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gc", ResourceVersion: "1"}}
	batch := c.DeepCopy()
	batch.ResourceVersion, batch.Status.Upgrade = "2", &operatorv1alpha1.UpgradeStatus{CurrentNodes: []string{"n1"}}
	if got := UpdateKeys(c, batch); got != nil {
		t.Errorf("a cluster's new upgrade batch woke %v (the machine reads the nodes' states, not the batch)", got)
	}
	healing := batch.DeepCopy()
	healing.ResourceVersion, healing.Status.Volumes = "3", []operatorv1alpha1.VolumeStatus{{Name: "v", State: "Healing"}}
	if got := UpdateKeys(batch, healing); !slices.Equal(got, want) {
		t.Errorf("a volume's new heal state woke %v, want %v", got, want)
	}
	if got := UpdateKeys(nil, c); !slices.Equal(got, want) {
		t.Errorf("a cluster's add woke %v, want %v", got, want)
	}
}
