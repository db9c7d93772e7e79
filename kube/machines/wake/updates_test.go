package wake

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
)

// Only a change of the node's message and conditions concerns the node
// alone; any other change, however small, concerns every machine.
func TestOnlyNodeMessage(t *testing.T) {
	base := &operatorv1alpha1.GlusterNode{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "n", ResourceVersion: "1"},
		Spec:       operatorv1alpha1.GlusterNodeSpec{Cluster: "c", Zone: "z1"},
		Status:     operatorv1alpha1.GlusterNodeStatus{State: "HealWait", Message: "12 entries are pending heal."},
	}
	for _, tc := range []struct {
		name   string
		change func(n *operatorv1alpha1.GlusterNode)
		want   bool
	}{
		{name: "a new message", change: func(n *operatorv1alpha1.GlusterNode) { n.Status.Message = "3 entries are pending heal." }, want: true},
		{name: "new conditions", change: func(n *operatorv1alpha1.GlusterNode) {
			n.Status.Conditions = []metav1.Condition{{Type: "Progressing", Status: metav1.ConditionTrue, Message: "3 entries"}}
		}, want: true},
		{name: "a new state", change: func(n *operatorv1alpha1.GlusterNode) { n.Status.State = "Online" }},
		{name: "a ledger entry", change: func(n *operatorv1alpha1.GlusterNode) {
			n.Status.Ledger = append(n.Status.Ledger, operatorv1alpha1.LedgerEntry{Action: operatorv1alpha1.LedgerActionRollWorkload})
		}},
		{name: "an annotation (an admin's request)", change: func(n *operatorv1alpha1.GlusterNode) { n.Annotations = map[string]string{"a": "b"} }},
		{name: "a spec change", change: func(n *operatorv1alpha1.GlusterNode) { n.Spec.Zone = "z2" }},
		{name: "a deletion", change: func(n *operatorv1alpha1.GlusterNode) { n.DeletionTimestamp = &metav1.Time{} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := base.DeepCopy()
			n.ResourceVersion = "2"
			tc.change(n)
			if got := OnlyNodeMessage(base, n); got != tc.want {
				t.Errorf("OnlyNodeMessage() = %t, want %t", got, tc.want)
			}
		})
	}
	if OnlyNodeMessage(nil, base) || OnlyNodeMessage(&operatorv1alpha1.GlusterCluster{}, base) {
		t.Error("an add, or an object that is not a node, was taken for a message change")
	}
}

// A volume's report is its heal state, its brick counts and its being
// there; its heal's progress is not.
func TestVolumeReportsChanged(t *testing.T) {
	base := &operatorv1alpha1.GlusterCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c", ResourceVersion: "1"}}
	base.Status.Volumes = []operatorv1alpha1.VolumeStatus{
		{Name: "a", State: "Healing", PendingEntries: 30, Bricks: 3, BricksOnline: 3, Message: "30 entries pending heal."},
		{Name: "b", State: "Healthy", Bricks: 3, BricksOnline: 3},
	}
	for _, tc := range []struct {
		name   string
		change func(c *operatorv1alpha1.GlusterCluster)
		want   []string
	}{
		{name: "heal progress", change: func(c *operatorv1alpha1.GlusterCluster) {
			c.Status.Volumes[0].PendingEntries, c.Status.Volumes[0].Message = 10, "10 entries pending heal."
		}},
		{name: "a volume healed", change: func(c *operatorv1alpha1.GlusterCluster) { c.Status.Volumes[0].State = "Healthy" }, want: []string{"a"}},
		{name: "a brick offline", change: func(c *operatorv1alpha1.GlusterCluster) { c.Status.Volumes[1].BricksOnline = 2 }, want: []string{"b"}},
		{name: "a volume gone", change: func(c *operatorv1alpha1.GlusterCluster) { c.Status.Volumes = c.Status.Volumes[1:] }, want: []string{"a"}},
		{name: "a volume new", change: func(c *operatorv1alpha1.GlusterCluster) {
			c.Status.Volumes = append(c.Status.Volumes, operatorv1alpha1.VolumeStatus{Name: "c", State: "Healthy"})
		}, want: []string{"c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := base.DeepCopy()
			tc.change(n)
			if got := VolumeReportsChanged(base, n); !slices.Equal(got, tc.want) {
				t.Errorf("VolumeReportsChanged() = %v, want %v", got, tc.want)
			}
		})
	}
	if got := VolumeReportsChanged(nil, base); got != nil {
		t.Errorf("an add reported %v, want nothing (it wakes every machine)", got)
	}
}

// The heal machine hears of a node's change only when it changes the
// node's peer, its class of state or whether its state changes bricks.
func TestNodeChangeConcernsHeal(t *testing.T) {
	base := &operatorv1alpha1.GlusterNode{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "n", ResourceVersion: "1"},
		Spec:       operatorv1alpha1.GlusterNodeSpec{Cluster: "c"},
		Status:     operatorv1alpha1.GlusterNodeStatus{State: "Rejoining", PeerID: "p"},
	}
	for _, tc := range []struct {
		name   string
		change func(n *operatorv1alpha1.GlusterNode)
		want   bool
	}{
		{name: "a step inside the upgrade's states", change: func(n *operatorv1alpha1.GlusterNode) { n.Status.State = "HealWait" }},
		{name: "a ledger entry", change: func(n *operatorv1alpha1.GlusterNode) {
			n.Status.Ledger = []operatorv1alpha1.LedgerEntry{{Action: operatorv1alpha1.LedgerActionRollWorkload}}
		}},
		{name: "back Online", change: func(n *operatorv1alpha1.GlusterNode) { n.Status.State = "Online" }, want: true},
		{name: "into a state that changes bricks", change: func(n *operatorv1alpha1.GlusterNode) { n.Status.State = "Restarting" }, want: true},
		{name: "a new peer", change: func(n *operatorv1alpha1.GlusterNode) { n.Status.PeerID = "q" }, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changed := base.DeepCopy()
			changed.ResourceVersion = "2"
			tc.change(changed)
			if got := NodeChangeConcernsHeal(base, changed); got != tc.want {
				t.Fatalf("NodeChangeConcernsHeal = %t, want %t", got, tc.want)
			}
		})
	}
	if !NodeChangeConcernsHeal(nil, base) {
		t.Error("an added node does not concern the heal machine")
	}
}

// A node hears of the upgrade's batch when it joins or leaves it, when the
// batch it is in changes, or when the target does.
func TestUpgradeConcernsNode(t *testing.T) {
	at := func(state string, batch ...string) *operatorv1alpha1.GlusterCluster {
		return &operatorv1alpha1.GlusterCluster{Status: operatorv1alpha1.GlusterClusterStatus{
			Upgrade: &operatorv1alpha1.UpgradeStatus{State: state, ToVersion: "4.1.1", CurrentNodes: batch}}}
	}
	for _, tc := range []struct {
		name     string
		old, new *operatorv1alpha1.GlusterCluster
		want     bool
	}{
		{"joins the batch", at("RollingServers", "b"), at("RollingServers", "a", "b"), true},
		{"its batch grows", at("RollingServers", "a"), at("RollingServers", "a", "b"), true},
		{"another batch", at("RollingServers", "b"), at("RollingServers", "c"), false},
		{"its batch is paused", at("RollingServers", "a"), at("Paused", "a"), true},
		{"a paused batch of others moves on", at("Paused", "a", "b"), at("Paused", "b"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := UpgradeConcernsNode(tc.old, tc.new, "a"); got != tc.want {
				t.Fatalf("UpgradeConcernsNode = %t, want %t", got, tc.want)
			}
		})
	}
	retarget := at("RollingServers", "b")
	retarget.Status.Upgrade.ToVersion = "4.1.2"
	if !UpgradeConcernsNode(at("RollingServers", "b"), retarget, "a") {
		t.Error("a new target does not concern a node outside the batch")
	}
}

func TestUnreadNamesAnOwnedFieldNotRead(t *testing.T) {
	owns := func(st *operatorv1alpha1.GlusterClusterStatus) []any { return []any{&st.Capacity} }
	if got := Unread(NodeReads, owns); len(got) != 1 {
		t.Errorf("Unread = %v, want the capacity", got)
	}
}

// The cluster and upgrade machines wake for a change of what they read,
// not for the disruption machine's slice nor, for the upgrade machine,
// the cluster machine's.
func TestClusterChangeConcernsClusterAndUpgrade(t *testing.T) {
	base := &operatorv1alpha1.GlusterCluster{}
	changed := func(edit func(*operatorv1alpha1.GlusterClusterStatus)) *operatorv1alpha1.GlusterCluster {
		c := base.DeepCopy()
		edit(&c.Status)
		return c
	}
	for _, tc := range []struct {
		name             string
		new              *operatorv1alpha1.GlusterCluster
		cluster, upgrade bool
	}{
		{"a volume's heal", changed(func(st *operatorv1alpha1.GlusterClusterStatus) {
			st.Volumes = []operatorv1alpha1.VolumeStatus{{Name: "v"}}
		}), true, true},
		{"an upgrade batch", changed(func(st *operatorv1alpha1.GlusterClusterStatus) {
			st.Upgrade = &operatorv1alpha1.UpgradeStatus{State: "RollingServers"}
		}), true, true},
		{"the cluster's phase", changed(func(st *operatorv1alpha1.GlusterClusterStatus) { st.Phase = "Ready" }), true, false},
		{"the capacity", changed(func(st *operatorv1alpha1.GlusterClusterStatus) { st.Capacity = &operatorv1alpha1.CapacityStatus{} }), true, false},
		{"the disruption machine's state", changed(func(st *operatorv1alpha1.GlusterClusterStatus) {
			st.Disruption = &operatorv1alpha1.DisruptionStatus{State: "Open"}
		}), false, false},
		{"the ledger", changed(func(st *operatorv1alpha1.GlusterClusterStatus) {
			st.Ledger = []operatorv1alpha1.LedgerEntry{{Action: "x"}}
		}), true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ClusterChangeConcernsCluster(base, tc.new); got != tc.cluster {
				t.Errorf("ClusterChangeConcernsCluster = %t, want %t", got, tc.cluster)
			}
			if got := ClusterChangeConcernsUpgrade(base, tc.new); got != tc.upgrade {
				t.Errorf("ClusterChangeConcernsUpgrade = %t, want %t", got, tc.upgrade)
			}
		})
	}
	if !ClusterChangeConcernsCluster(nil, base) || !ClusterChangeConcernsUpgrade(nil, base) {
		t.Error("a cluster's add does not concern its cluster and upgrade machines")
	}
}
