package objects

import (
	"testing"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
)

// The operator's image flags reach every container the builders default:
// etcd, the file driver (unless the cluster names its own) and both
// sidecars. Not parallel: it swaps the package's images.
func TestUseImagesReachesTheBuilders(t *testing.T) {
	t.Cleanup(func() { images = DefaultImages })
	mirror := Images{
		Etcd:             "mirror.example/etcd:v3.5.17",
		CSIFile:          "mirror.example/gluster-csi-driver@sha256:00",
		CSIProvisioner:   "mirror.example/csi-provisioner:v5.2.0",
		CSINodeRegistrar: "mirror.example/csi-node-driver-registrar:v2.13.0",
		CSISnapshotter:   "mirror.example/csi-snapshotter:v8.2.0",
	}
	if err := UseImages(mirror); err != nil {
		t.Fatal(err)
	}
	c := &operatorv1alpha1.GlusterCluster{}
	c.Name, c.Namespace = "g", "ns"
	c.Spec.Gluster = &operatorv1alpha1.GlusterServerSpec{Image: "gd2", Version: "4.1.0"}
	c.Spec.CSI = &operatorv1alpha1.CSISpec{Snapshots: &operatorv1alpha1.CSISnapshots{Enabled: true}}
	file := operatorv1alpha1.GlusterDriverFile
	got := map[string]string{}
	for name, img := range ContainerImages(EtcdStatefulSet(c).Spec.Template.Spec) {
		got["etcd/"+name] = img
	}
	for name, img := range ContainerImages(CSIControllerDeployment(c, file, "4.1.0").Spec.Template.Spec) {
		got["controller/"+name] = img
	}
	for name, img := range ContainerImages(CSINodeDaemonSet(c, file, "4.1.0").Spec.Template.Spec) {
		got["node/"+name] = img
	}
	want := map[string]string{
		"etcd/" + containerEtcd:              mirror.Etcd,
		"controller/" + containerCSIDriver:   mirror.CSIFile,
		"controller/" + containerProvision:   mirror.CSIProvisioner,
		"controller/" + containerSnapshotter: mirror.CSISnapshotter,
		"node/" + containerCSIDriver:         mirror.CSIFile,
		"node/" + containerRegistrar:         mirror.CSINodeRegistrar,
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s runs %q, want %q", k, got[k], w)
		}
	}
	// A cluster's own driver image still wins.
	c.Spec.CSI = &operatorv1alpha1.CSISpec{FileImage: "own.example/csi@sha256:11"}
	if img := CSIImage(c, "4.1.0"); img != c.Spec.CSI.FileImage {
		t.Errorf("CSIImage = %q, want the cluster's %q", img, c.Spec.CSI.FileImage)
	}
	bad := mirror
	bad.CSIProvisioner = ""
	if err := UseImages(bad); err == nil {
		t.Error("UseImages accepted an empty csi-provisioner image")
	}
	if images != mirror {
		t.Errorf("a refused UseImages changed the images to %+v", images)
	}
}

// Named and Field agree, so a name in a flag, a chart value or
// relatedImages always finds its field.
func TestImagesNamedAndFieldAgree(t *testing.T) {
	imgs := DefaultImages
	for _, n := range imgs.Named() {
		f, ok := imgs.Field(n[0])
		if !ok || *f != n[1] {
			t.Errorf("Field(%q) = %v, %t; Named has %q", n[0], f, ok, n[1])
		}
		if n[1] == "" {
			t.Errorf("default image %s is empty", n[0])
		}
	}
	if _, ok := imgs.Field("nope"); ok {
		t.Error("Field knows an unknown name")
	}
}
