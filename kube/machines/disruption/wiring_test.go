package disruption

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/engine"
)

// A node's new message does not wake the disruption machine; its new
// state, and any cluster update, do.
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
	c2 := c.DeepCopy()
	c2.ResourceVersion = "2"
	if got := UpdateKeys(c, c2); !slices.Equal(got, want) {
		t.Errorf("a cluster's update woke %v, want %v", got, want)
	}
}
