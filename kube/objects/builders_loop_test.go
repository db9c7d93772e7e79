package objects

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/gluster/anthill/kube/internal/fixtures"
)

func TestLoopProvisionerClaimsAreDirectoriesGD2RegistersAsLoopDevices(t *testing.T) {
	c := fixtures.Cluster("gc")
	n := fixtures.Node("gc", "gc-z1-abcde", fixtures.PVCStorage(2))
	n.Spec.Storage.Provisioner = ProvisionerLoop
	sts := NodeStatefulSet(c, n, "4.1.0")
	ctr := sts.Spec.Template.Spec.Containers[0]

	want := []string{"/var/lib/anthill/devices/brick-0", "/var/lib/anthill/devices/brick-1"}
	if got := NodeDevicePaths(n); !slices.Equal(got, want) {
		t.Fatalf("device paths %v, want %v", got, want)
	}
	if NodeProvisioner(n) != ProvisionerLoop {
		t.Errorf("provisioner %q", NodeProvisioner(n))
	}
	if len(ctr.VolumeDevices) != 0 {
		t.Errorf("volume devices %v: a loop device is a directory", ctr.VolumeDevices)
	}
	mounts := map[string]string{}
	for _, m := range ctr.VolumeMounts {
		mounts[m.MountPath] = m.Name
	}
	for i, p := range want {
		if mounts[p] != BrickClaimTemplateName(i) {
			t.Errorf("%s mounts %q, want claim %s", p, mounts[p], BrickClaimTemplateName(i))
		}
	}
	if mounts["/run/lvm"] != "" || mounts["/usr/lib/modules"] != "" {
		t.Errorf("mounts %v: loop devices need neither LVM's locks nor the host's modules (a host may have none)", mounts)
	}
	if mounts["/dev"] != volumeHostDev {
		t.Errorf("/dev mounts %q: losetup needs the host's loop devices made after the container started", mounts["/dev"])
	}
	for _, cl := range sts.Spec.VolumeClaimTemplates {
		if cl.Spec.VolumeMode == nil || *cl.Spec.VolumeMode != corev1.PersistentVolumeFilesystem {
			t.Errorf("claim %s mode %v, want Filesystem", cl.Name, cl.Spec.VolumeMode)
		}
	}

	lvm := fixtures.Node("gc", "gc-z1-fghij", fixtures.PVCStorage(1))
	if NodeProvisioner(lvm) != ProvisionerLVM || NodeDevicePaths(lvm)[0] != "/dev/anthill/brick-0" {
		t.Errorf("unset provisioner: %q %v, want lvm on Block claims", NodeProvisioner(lvm), NodeDevicePaths(lvm))
	}
}

func TestNodeFromTemplateCarriesTheProvisioner(t *testing.T) {
	c := fixtures.Cluster("gc")
	c.Spec.NodeTemplates[0].Storage.Provisioner = ProvisionerLoop
	n := NodeFromTemplate(c, &c.Spec.NodeTemplates[0], "abcde")
	if NodeProvisioner(n) != ProvisionerLoop {
		t.Errorf("provisioner %q, want the template's loop", NodeProvisioner(n))
	}
}

// glusterd2 reaps nothing, so it must not be PID 1 of its pod; a pod made
// before the fix keeps its revision (no restart of every server for it).
func TestGD2PodsShareTheirProcessNamespaceSoThatPauseReaps(t *testing.T) {
	c := fixtures.Cluster("gc")
	n := fixtures.Node("gc", "gc-z1-abcde", fixtures.PVCStorage(1))
	sts := NodeStatefulSet(c, n, "4.1.0")
	if p := sts.Spec.Template.Spec.ShareProcessNamespace; p == nil || !*p {
		t.Fatalf("shareProcessNamespace %v: glusterd2 would be PID 1 and leave its daemons zombies", p)
	}
	before := NodeTemplateRevision(c, n)
	tpl := nodeStatefulSet(c, n, "").Spec.Template
	delete(tpl.Annotations, AnnotationVersion)
	tpl.Spec.ShareProcessNamespace = nil
	if got := templateHash(&tpl); got != before {
		t.Errorf("revision %s, the template without the shared namespace %s: existing pods would all restart", before, got)
	}
}
