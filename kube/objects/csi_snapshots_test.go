package objects

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/labels"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/internal/fixtures"
)

// Snapshots add the snapshotter beside the provisioner, the rules it and a
// restoring provisioner need, and a class of the driver's name; without
// them none of it exists.
func TestSnapshotsAddTheSnapshotterItsRulesAndAClass(t *testing.T) {
	file := operatorv1alpha1.GlusterDriverFile
	off := fixtures.CSICluster("gc", file)
	if SnapshotsEnabled(off) {
		t.Fatal("snapshots on by default")
	}
	for _, ctr := range CSIControllerDeployment(off, file, "4.1.0").Spec.Template.Spec.Containers {
		if ctr.Name == containerSnapshotter {
			t.Error("a snapshotter runs without spec.csi.snapshots.enabled")
		}
	}
	for _, r := range CSIClusterRole(off).Rules {
		if slices.Contains(r.APIGroups, SnapshotGroupVersion.Group) {
			t.Errorf("rule %v without snapshots", r)
		}
	}

	on := fixtures.CSICluster("gc", file)
	on.Spec.CSI = &operatorv1alpha1.CSISpec{Snapshots: &operatorv1alpha1.CSISnapshots{Enabled: true, DeletionPolicy: "Retain"}}
	var found bool
	for _, ctr := range CSIControllerDeployment(on, file, "4.1.0").Spec.Template.Spec.Containers {
		if ctr.Name != containerSnapshotter {
			continue
		}
		found = true
		if want := []string{"--csi-address=" + csiSocket, "--timeout=3m"}; !slices.Equal(ctr.Args, want) || ctr.Image != images.CSISnapshotter {
			t.Errorf("snapshotter %s %v, want %s %v", ctr.Image, ctr.Args, images.CSISnapshotter, want)
		}
	}
	if !found {
		t.Fatal("no snapshotter with spec.csi.snapshots.enabled")
	}
	granted := map[string][]string{}
	for _, r := range CSIClusterRole(on).Rules {
		if slices.Contains(r.APIGroups, SnapshotGroupVersion.Group) {
			for _, res := range r.Resources {
				granted[res] = r.Verbs
			}
		}
	}
	for res, verb := range map[string]string{
		"volumesnapshotcontents": "patch", "volumesnapshotcontents/status": "update", "volumesnapshotclasses": "watch", "volumesnapshots": "get",
	} {
		if !slices.Contains(granted[res], verb) {
			t.Errorf("%s lacks %s: %v", res, verb, granted)
		}
	}
	vsc := VolumeSnapshotClassObject(on)
	if vsc.GetName() != "gc-file" || vsc.Object["driver"] != CSIFileDriverName || vsc.Object["deletionPolicy"] != "Retain" ||
		vsc.GetAPIVersion() != "snapshot.storage.k8s.io/v1" || !CSIClusterScopedSelector(on.Namespace, on.Name).Matches(labels.Set(vsc.GetLabels())) {
		t.Errorf("class %v", vsc.Object)
	}
	on.Spec.CSI.Snapshots.ClassName = "gluster-snaps"
	if VolumeSnapshotClassName(on) != "gluster-snaps" {
		t.Errorf("className not used: %s", VolumeSnapshotClassName(on))
	}
}
