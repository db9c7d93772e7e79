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
// of its cluster; a cluster's heal progress wakes no node, its upgrade
// batch no heal machine, its spec every machine.
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

	progress := c.DeepCopy()
	progress.ResourceVersion = "2"
	progress.Status.Volumes = []operatorv1alpha1.VolumeStatus{{Name: "v", PendingEntries: 3}}
	if got, want := machinesOf(km.forClusterUpdate(c, progress)), []string{"cluster", "heal", "upgrade"}; !slices.Equal(got, want) {
		t.Errorf("the heal machine's progress woke %v, want %v (no node)", got, want)
	}
	batch := progress.DeepCopy()
	batch.ResourceVersion = "3"
	batch.Status.Upgrade = &operatorv1alpha1.UpgradeStatus{CurrentNodes: []string{"n1"}}
	if got, want := machinesOf(km.forClusterUpdate(progress, batch)), []string{"cluster", "node", "upgrade"}; !slices.Equal(got, want) {
		t.Errorf("an upgrade batch woke %v, want %v (no heal machine: heal-info does not change)", got, want)
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
