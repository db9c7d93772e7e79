package node

import (
	"strings"
	"testing"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gluster/anthill/fsm"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/states"
)

// A node's peer is added through one GD2 of the pool, never through the
// management Service, whose endpoints include pods that have not joined:
// while no node has joined, only the cluster's first node by name joins
// and the others wait for it, whatever the order of their syncs; after
// that, each joins through a node that joined, Online first; and through
// the cluster's client only when every node that joined may have left the
// pool.
func TestPoolEntryIsOneGD2OfThePool(t *testing.T) {
	node := func(name, cluster string, st fsm.State, peer string) *operatorv1alpha1.GlusterNode {
		return &operatorv1alpha1.GlusterNode{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       operatorv1alpha1.GlusterNodeSpec{Cluster: cluster},
			Status:     operatorv1alpha1.GlusterNodeStatus{State: string(st), PeerID: peer},
		}
	}
	deleting := node("gc-a-00000", "gc", states.NodeOnline, "p0")
	deleting.DeletionTimestamp = &metav1.Time{}
	fresh := []*operatorv1alpha1.GlusterNode{
		node("gc-c-1", "gc", states.NodeProvisioning, ""), node("gc-a-1", "gc", states.NodeProvisioning, ""), node("gc-b-1", "gc", states.NodeProvisioning, ""),
	}
	for _, c := range []struct {
		name       string
		nodes      []*operatorv1alpha1.GlusterNode
		self       string
		via, after string
	}{
		{"none joined: the first by name joins", fresh, "gc-a-1", "", ""},
		{"none joined: the others wait for it", fresh, "gc-c-1", "", "gc-a-1"},
		{"another cluster's nodes and a deleted one do not count", []*operatorv1alpha1.GlusterNode{
			node("aa-a-1", "aa", states.NodeOnline, "px"), deleting, node("gc-b-1", "gc", states.NodeProvisioning, ""), node("gc-c-1", "gc", states.NodeProvisioning, ""),
		}, "gc-c-1", "", "gc-b-1"},
		{"the first joined, not yet Online: through it", []*operatorv1alpha1.GlusterNode{
			node("gc-a-1", "gc", states.NodeJoining, "pa"), node("gc-b-1", "gc", states.NodeProvisioning, ""),
		}, "gc-b-1", "gc-a-1", ""},
		{"an Online node before one joining, whatever the names", []*operatorv1alpha1.GlusterNode{
			node("gc-a-1", "gc", states.NodeJoining, "pa"), node("gc-z-1", "gc", states.NodeOnline, "pz"), node("gc-b-1", "gc", states.NodeProvisioning, ""),
		}, "gc-b-1", "gc-z-1", ""},
		{"a replacement joins through an Online node, never itself or a draining one", []*operatorv1alpha1.GlusterNode{
			node("gc-a-1", "gc", states.NodeDraining, "pa"), node("gc-a-2", "gc", states.NodeProvisioning, ""), node("gc-b-1", "gc", states.NodeOnline, "pb"), node("gc-c-1", "gc", states.NodeOnline, "pc"),
		}, "gc-a-2", "gc-b-1", ""},
		{"only offline or leaving nodes joined: the cluster's client", []*operatorv1alpha1.GlusterNode{
			node("gc-a-1", "gc", states.NodeOffline, "pa"), node("gc-b-1", "gc", states.NodeDraining, "pb"), node("gc-c-1", "gc", states.NodeProvisioning, ""),
		}, "gc-c-1", "", ""},
	} {
		if via, after := poolEntry(c.nodes, "gc", c.self); via != c.via || after != c.after {
			t.Errorf("%s: poolEntry = (%q, %q), want (%q, %q)", c.name, via, after, c.via, c.after)
		}
	}
}

// Two nodes of a new cluster, both with their pods ready: the one later by
// name waits for the first to join (before this, each added itself
// through the management Service, and real GD2 split the pool), then
// joins through the first one's GD2 and comes Online.
func TestNodeSyncerJoinsAfterTheClustersFirstNode(t *testing.T) {
	f := newNodeFixture(t)
	f.addNode("gc-z0-a")
	f.syncNode("gc-z1-a")
	n := f.nodeNamed("gc-z1-a")
	if n.Status.State != string(states.NodeProvisioning) || n.Status.PeerID != "" {
		t.Fatalf("before the first node joined: %s, peer %q; want Provisioning without a peer", n.Status.State, n.Status.PeerID)
	}
	if c := apimeta.FindStatusCondition(n.Status.Conditions, operatorv1alpha1.ConditionProgressing); c == nil || c.Reason != states.ReasonWaitingForPoolSeed || !strings.Contains(c.Message, "gc-z0-a") {
		t.Fatalf("Progressing %+v: want %s naming gc-z0-a", c, states.ReasonWaitingForPoolSeed)
	}
	f.syncNode("gc-z0-a")
	if first := f.nodeNamed("gc-z0-a"); first.Status.State != string(states.NodeJoining) || first.Status.PeerID == "" {
		t.Fatalf("the first node: %s, peer %q; want Joining with a peer", first.Status.State, first.Status.PeerID)
	}
	for range 2 {
		f.syncNode("gc-z1-a")
	}
	if n := f.nodeNamed("gc-z1-a"); n.Status.State != string(states.NodeOnline) || n.Status.PeerID == "" {
		t.Fatalf("after the first node joined: %s, peer %q; want Online", n.Status.State, n.Status.PeerID)
	}
}

// A leaving node's peer is deleted through the GD2 of another node of the
// pool (GD2 refuses to delete the peer serving the request), Online first,
// nodes of a cluster being deleted included until their own turn; none
// left, the cluster's client.
func TestPoolMemberDeletesThroughAnotherNode(t *testing.T) {
	node := func(name string, st fsm.State, peer string, deleting bool) *operatorv1alpha1.GlusterNode {
		n := &operatorv1alpha1.GlusterNode{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: operatorv1alpha1.GlusterNodeStatus{State: string(st), PeerID: peer}}
		if deleting {
			n.DeletionTimestamp = &metav1.Time{}
		}
		return n
	}
	for _, c := range []struct {
		name  string
		nodes []*operatorv1alpha1.GlusterNode
		self  string
		want  string
	}{
		{"a decommissioned node: an Online one", []*operatorv1alpha1.GlusterNode{
			node("a", states.NodeDraining, "pa", false), node("b", states.NodeOffline, "pb", false), node("c", states.NodeOnline, "pc", false),
		}, "a", "c"},
		{"a cluster being deleted: the next node, deleted too", []*operatorv1alpha1.GlusterNode{
			node("a", states.NodeOnline, "pa", true), node("b", states.NodeOnline, "pb", true), node("c", states.NodeDetaching, "pc", true),
		}, "c", "a"},
		{"the last node: none", []*operatorv1alpha1.GlusterNode{
			node("a", states.NodeDeleted, "pa", true), node("c", states.NodeDetaching, "pc", true),
		}, "c", ""},
	} {
		if got := poolMember(c.nodes, c.self); got != c.want {
			t.Errorf("%s: poolMember = %q, want %q", c.name, got, c.want)
		}
	}
}
