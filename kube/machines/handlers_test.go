package machines

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	listers "github.com/gluster/anthill/kube/client/listers/operator/v1alpha1"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/kube/internal/fixtures"
	"github.com/gluster/anthill/kube/machines/gather"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
)

// A PersistentVolume holds a cluster's deletion when it came from one of the
// cluster's CSI drivers (what a provisioner creates: no anthill label) or
// when an admin labelled it; a PV of another cluster's driver, or of the
// same cluster name in another namespace, does not.
func TestPVsMapToTheClustersTheyUse(t *testing.T) {
	a := &operatorv1alpha1.GlusterCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "gc"}}
	b := &operatorv1alpha1.GlusterCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns2", Name: "gc"}}
	clusters := fixtures.NewIndexer()
	if err := clusters.AddIndexers(cache.Indexers{gather.UsesIndex: gather.ClusterUses}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*operatorv1alpha1.GlusterCluster{a, b} {
		if err := clusters.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	km := keyMapper{clusters: listers.NewGlusterClusterLister(clusters), byUse: clusters}
	csiPV := func(driver string) *corev1.PersistentVolume {
		return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv"}, Spec: corev1.PersistentVolumeSpec{
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: "h"}}}}
	}
	for _, tc := range []struct {
		name string
		pv   *corev1.PersistentVolume
		want []engine.Key
	}{
		{"provisioned by the driver, whose name every cluster shares", csiPV(objects.CSIFileDriverName), []engine.Key{gather.ClusterKey("ns1", "gc"), gather.ClusterKey("ns2", "gc")}},
		{"provisioned by an earlier release's file driver of ns1/gc", csiPV(objects.LegacyCSIDriverNames("ns1", "gc")[0]), []engine.Key{gather.ClusterKey("ns1", "gc")}},
		{"provisioned by an earlier release's block driver of ns2/gc", csiPV(objects.LegacyCSIDriverNames("ns2", "gc")[1]), []engine.Key{gather.ClusterKey("ns2", "gc")}},
		{"another CSI driver", csiPV("ebs.csi.aws.com"), nil},
		{"not CSI, unlabelled", &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv"}}, nil},
		{"labelled by an admin with the cluster name", &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv", Labels: map[string]string{objects.LabelCluster: "gc"}}},
			[]engine.Key{gather.ClusterKey("ns1", "gc"), gather.ClusterKey("ns2", "gc")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := km.forPV(tc.pv)
			slices.SortFunc(got, func(x, y engine.Key) int { return strings.Compare(x.Namespace, y.Namespace) })
			if !slices.Equal(got, tc.want) {
				t.Fatalf("keys %v, want %v", got, tc.want)
			}
			for _, c := range []*operatorv1alpha1.GlusterCluster{a, b} {
				if gather.UsesCluster(tc.pv, c) != slices.Contains(tc.want, gather.ClusterKey(c.Namespace, c.Name)) {
					t.Fatalf("usesCluster(%s/%s) disagrees with the key mapping", c.Namespace, c.Name)
				}
			}
		})
	}
}

// A StorageClass wakes the cluster whose labels it carries, and every
// cluster that wants its name: its creation is a clash to report, its
// deletion lets that cluster create its own.
func TestStorageClassesMapToTheirClusterAndToClustersWantingTheName(t *testing.T) {
	a := &operatorv1alpha1.GlusterCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "gc"}}
	b := &operatorv1alpha1.GlusterCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns2", Name: "other"}}
	b.Spec.CSI = &operatorv1alpha1.CSISpec{StorageClasses: &operatorv1alpha1.CSIStorageClasses{File: &operatorv1alpha1.StorageClassSpec{Name: "shared"}}}
	clusters := fixtures.NewIndexer()
	for _, c := range []*operatorv1alpha1.GlusterCluster{a, b} {
		if err := clusters.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	km := keyMapper{clusters: listers.NewGlusterClusterLister(clusters)}
	ours := objects.StorageClassObject(a, operatorv1alpha1.GlusterDriverFile)
	admins := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "shared"}}
	aTakesShared := ours.DeepCopy()
	aTakesShared.Name = "shared"
	for _, tc := range []struct {
		name string
		sc   *storagev1.StorageClass
		want []engine.Key
	}{
		{"ns1/gc's own class", ours, []engine.Key{gather.ClusterKey("ns1", "gc")}},
		{"an admin's class of the name ns2/other wants", admins, []engine.Key{gather.ClusterKey("ns2", "other")}},
		{"ns1/gc's class under the name ns2/other wants", aTakesShared, []engine.Key{gather.ClusterKey("ns1", "gc"), gather.ClusterKey("ns2", "other")}},
		{"an unrelated class", &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "fast"}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := km.forStorageClass(tc.sc)
			slices.SortFunc(got, func(x, y engine.Key) int { return strings.Compare(x.Namespace, y.Namespace) })
			if !slices.Equal(got, tc.want) {
				t.Fatalf("keys %v, want %v", got, tc.want)
			}
		})
	}
}

// A node's own message wakes only the node, its transition every machine
// of its cluster (the heal machine only across classes of states); a
// cluster's heal progress wakes no node, its upgrade batch no heal machine
// and only the nodes it concerns, its spec every machine.
func TestUpdatesWakeOnlyTheMachinesTheyConcern(t *testing.T) {
	c := &operatorv1alpha1.GlusterCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gc", ResourceVersion: "1"}}
	n := &operatorv1alpha1.GlusterNode{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "n1", ResourceVersion: "1"},
		Spec: operatorv1alpha1.GlusterNodeSpec{Cluster: "gc"}, Status: operatorv1alpha1.GlusterNodeStatus{State: "HealWait", Message: "9 entries are pending heal."}}
	nodes, clusters := fixtures.NewIndexer(), fixtures.NewIndexer()
	if err := nodes.Add(n); err != nil {
		t.Fatal(err)
	}
	if err := clusters.Add(c); err != nil {
		t.Fatal(err)
	}
	km := keyMapper{nodes: listers.NewGlusterNodeLister(nodes), clusters: listers.NewGlusterClusterLister(clusters)}
	nodeKey := gather.NodeKey("ns", "n1")
	machinesOf := func(keys []engine.Key) []string {
		var out []string
		for _, k := range keys {
			out = append(out, k.Machine)
		}
		slices.Sort(out)
		return out
	}
	everyMachine := machinesOf([]engine.Key{nodeKey, gather.ClusterKey("ns", "gc"), gather.UpgradeKey("ns", "gc"), gather.HealKey("ns", "gc")})

	said := n.DeepCopy()
	said.ResourceVersion, said.Status.Message = "2", "3 entries are pending heal."
	if got := km.forNodeUpdate(n, said); !slices.Equal(got, []engine.Key{nodeKey}) {
		t.Errorf("a node's new message woke %v, want only the node", got)
	}
	online := said.DeepCopy()
	online.ResourceVersion, online.Status.State = "3", "Online"
	if got := machinesOf(km.forNodeUpdate(said, online)); !slices.Equal(got, everyMachine) {
		t.Errorf("a node's transition woke %v, want %v", got, everyMachine)
	}
	// A step inside the upgrade's states changes nothing the heal
	// machine reads.
	rejoining, healWait := said.DeepCopy(), said.DeepCopy()
	rejoining.Status.State, healWait.ResourceVersion = "Rejoining", "3"
	if got, want := machinesOf(km.forNodeUpdate(rejoining, healWait)), []string{"cluster", "node", "upgrade"}; !slices.Equal(got, want) {
		t.Errorf("Rejoining to HealWait woke %v, want %v (no heal machine)", got, want)
	}

	progress := c.DeepCopy()
	progress.ResourceVersion = "2"
	progress.Status.Volumes = []operatorv1alpha1.VolumeStatus{{Name: "v", PendingEntries: 3}}
	if got, want := machinesOf(km.forClusterUpdate(c, progress)), []string{"cluster", "heal", "upgrade"}; !slices.Equal(got, want) {
		t.Errorf("the heal machine's progress woke %v, want %v (no node)", got, want)
	}
	batch := progress.DeepCopy()
	batch.ResourceVersion = "3"
	batch.Status.Upgrade = &operatorv1alpha1.UpgradeStatus{State: "RollingServers", CurrentNodes: []string{"n1"}}
	if got, want := machinesOf(km.forClusterUpdate(progress, batch)), []string{"cluster", "node", "upgrade"}; !slices.Equal(got, want) {
		t.Errorf("an upgrade batch woke %v, want %v (no heal machine: heal-info does not change)", got, want)
	}
	// A batch that neither had nor has the node leaves it asleep; one it
	// leaves wakes it.
	other := batch.DeepCopy()
	other.ResourceVersion = "3a"
	other.Status.Upgrade = &operatorv1alpha1.UpgradeStatus{State: "RollingServers", CurrentNodes: []string{"n2"}}
	if got, want := machinesOf(km.forClusterUpdate(batch, other)), []string{"cluster", "node", "upgrade"}; !slices.Equal(got, want) {
		t.Errorf("a batch the node left woke %v, want %v", got, want)
	}
	next := other.DeepCopy()
	next.ResourceVersion = "3b"
	next.Status.Upgrade.CurrentNodes = []string{"n3"}
	if got, want := machinesOf(km.forClusterUpdate(other, next)), []string{"cluster", "upgrade"}; !slices.Equal(got, want) {
		t.Errorf("a batch of other nodes woke %v, want %v (not the node)", got, want)
	}
	spec := batch.DeepCopy()
	spec.ResourceVersion, spec.Spec.Paused = "4", true
	if got := machinesOf(km.forClusterUpdate(batch, spec)); !slices.Equal(got, everyMachine) {
		t.Errorf("a spec change woke %v, want %v", got, everyMachine)
	}
	if got := machinesOf(km.forClusterUpdate(nil, c)); !slices.Equal(got, everyMachine) {
		t.Errorf("a cluster's add woke %v, want %v", got, everyMachine)
	}
}

// waitingNode is a node of cluster gc whose last decision waits with
// reason (its conditions say so, as the status writer leaves them).
func waitingNode(name, state, reason string, moved ...operatorv1alpha1.BrickRef) *operatorv1alpha1.GlusterNode {
	n := &operatorv1alpha1.GlusterNode{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: "1"},
		Spec: operatorv1alpha1.GlusterNodeSpec{Cluster: "gc"}, Status: operatorv1alpha1.GlusterNodeStatus{State: state, MovedBricks: moved}}
	for _, typ := range []string{operatorv1alpha1.ConditionReady, operatorv1alpha1.ConditionProgressing, operatorv1alpha1.ConditionDegraded} {
		n.Status.Conditions = append(n.Status.Conditions, metav1.Condition{Type: typ, Status: metav1.ConditionFalse, Reason: reason})
	}
	return n
}

// The heal machine's record that a volume healed wakes the draining node
// whose replacements in that volume it waits for, and the node waiting
// for its own bricks' other copies; not a node whose replacements are in
// another volume, nor a node at rest. A heal's progress wakes none of
// them. Without the wake-up a drain looks again only after a minute
// (issue 54: a drain idled up to a minute after its replacements healed).
func TestAVolumesHealWakesTheNodesWaitingForIt(t *testing.T) {
	c := &operatorv1alpha1.GlusterCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gc", ResourceVersion: "1"}}
	c.Status.Volumes = []operatorv1alpha1.VolumeStatus{{Name: "v1", State: "Healing", PendingEntries: 40, Bricks: 3, BricksOnline: 3}, {Name: "v2", State: "Healthy", Bricks: 3, BricksOnline: 3}}
	nodes, clusters := fixtures.NewIndexer(), fixtures.NewIndexer()
	for _, n := range []*operatorv1alpha1.GlusterNode{
		waitingNode("draining-v1", "Draining", states.ReasonReplacementHealing, operatorv1alpha1.BrickRef{Volume: "v1", Path: "/b/1"}),
		waitingNode("draining-v2", "Draining", states.ReasonReplacementHealing, operatorv1alpha1.BrickRef{Volume: "v2", Path: "/b/2"}),
		waitingNode("quiescing", "Quiescing", states.ReasonSoleHealedCopy),
		waitingNode("online", "Online", states.ReasonSteady),
	} {
		if err := nodes.Add(n); err != nil {
			t.Fatal(err)
		}
	}
	if err := clusters.Add(c); err != nil {
		t.Fatal(err)
	}
	km := keyMapper{nodes: listers.NewGlusterNodeLister(nodes), clusters: listers.NewGlusterClusterLister(clusters)}
	woken := func(keys []engine.Key) []string {
		var out []string
		for _, k := range keys {
			if k.Machine == states.NodeMachine {
				out = append(out, k.Name)
			}
		}
		slices.Sort(out)
		return out
	}

	progress := c.DeepCopy()
	progress.ResourceVersion, progress.Status.Volumes[0].PendingEntries, progress.Status.Volumes[0].Message = "2", 12, "12 entries pending heal."
	if got := woken(km.forClusterUpdate(c, progress)); len(got) != 0 {
		t.Errorf("a heal's progress woke nodes %v, want none", got)
	}
	healed := progress.DeepCopy()
	healed.ResourceVersion, healed.Status.Volumes[0].State, healed.Status.Volumes[0].PendingEntries = "3", "Healthy", 0
	if got, want := woken(km.forClusterUpdate(progress, healed)), []string{"draining-v1", "quiescing"}; !slices.Equal(got, want) {
		t.Errorf("volume v1 healed woke nodes %v, want %v", got, want)
	}
	brickDown := healed.DeepCopy()
	brickDown.ResourceVersion, brickDown.Status.Volumes[1].BricksOnline = "4", 2
	if got, want := woken(km.forClusterUpdate(healed, brickDown)), []string{"draining-v2", "quiescing"}; !slices.Equal(got, want) {
		t.Errorf("a brick of v2 going offline woke nodes %v, want %v", got, want)
	}
	gone := brickDown.DeepCopy()
	gone.ResourceVersion, gone.Status.Volumes = "5", gone.Status.Volumes[:1]
	if got, want := woken(km.forClusterUpdate(brickDown, gone)), []string{"draining-v2", "quiescing"}; !slices.Equal(got, want) {
		t.Errorf("volume v2 deleted woke nodes %v, want %v", got, want)
	}
}

// A node's change of state wakes the other nodes of its cluster whose wait
// another node ends (a drain with no place for its bricks, a node behind
// one earlier in its upgrade batch), not those waiting on their own
// things; its new message alone wakes none of them.
func TestANodesChangeWakesTheNodesWaitingForThePool(t *testing.T) {
	nodes := fixtures.NewIndexer()
	joining := waitingNode("joining", "Joining", states.ReasonWaitingForPeer)
	for _, n := range []*operatorv1alpha1.GlusterNode{
		joining,
		waitingNode("blocked", "Draining", states.ReasonDrainBlocked),
		waitingNode("behind", "Online", states.ReasonBatchMemberFirst),
		waitingNode("healing", "Draining", states.ReasonReplacementHealing),
		waitingNode("maintenance", "Maintenance", states.ReasonInMaintenance),
	} {
		if err := nodes.Add(n); err != nil {
			t.Fatal(err)
		}
	}
	other := waitingNode("other-cluster", "Draining", states.ReasonDrainBlocked)
	other.Spec.Cluster = "gc2"
	if err := nodes.Add(other); err != nil {
		t.Fatal(err)
	}
	km := keyMapper{nodes: listers.NewGlusterNodeLister(nodes)}
	woken := func(keys []engine.Key) []string {
		var out []string
		for _, k := range keys {
			if k.Machine == states.NodeMachine && k.Name != "joining" {
				out = append(out, k.Name)
			}
		}
		slices.Sort(out)
		return out
	}
	online := joining.DeepCopy()
	online.ResourceVersion, online.Status.State = "2", "Online"
	if got, want := woken(km.forNodeUpdate(joining, online)), []string{"behind", "blocked"}; !slices.Equal(got, want) {
		t.Errorf("a node's transition to Online woke %v, want %v", got, want)
	}
	said := online.DeepCopy()
	said.ResourceVersion, said.Status.Message = "3", "The node is online."
	if got := woken(km.forNodeUpdate(online, said)); len(got) != 0 {
		t.Errorf("a node's new message woke %v, want none of the other nodes", got)
	}
	if got, want := woken(km.forNodeUpdate(nil, online)), []string{"behind", "blocked"}; !slices.Equal(got, want) {
		t.Errorf("a node's add woke %v, want %v", got, want)
	}
}
